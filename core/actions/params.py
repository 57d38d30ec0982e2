"""The parameters of an operation: its JSON Schema checked once when defined, and every set of arguments normalised
and validated against it before a card freezes them or a read runs (jsonschema, Draft 2020-12)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError

from core.actions.model import ActionDefinitionError

EMAIL = re.compile(r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                   r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$")
MAX_STRING = 2000
_FORMATS = FormatChecker()


@_FORMATS.checks("email")
def _is_email(value) -> bool:
    return not isinstance(value, str) or bool(EMAIL.match(value))


def check_schema(schema) -> dict:
    """``schema`` if it is a JSON Schema for an object of parameters; otherwise the error names what is wrong."""
    if not isinstance(schema, dict):
        raise ActionDefinitionError('parameters must be a JSON Schema object, e.g. {"type": "object", "properties": '
                                    '{"order_id": {"type": "string"}}, "required": ["order_id"]}.')
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ActionDefinitionError(f"parameters is not a valid JSON Schema: {exc.message} "
                                    f"(at {'/'.join(map(str, exc.path)) or 'the top'}).") from None
    if schema.get("type") != "object":
        raise ActionDefinitionError('parameters must describe an object: set "type": "object".')
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise ActionDefinitionError("parameters.properties must be an object of named parameters.")
    unknown = [name for name in schema.get("required", []) if name not in properties]
    if unknown:
        raise ActionDefinitionError(f"parameters.required names {', '.join(unknown)}, which properties does not "
                                    "define.")
    return schema


def check_state_schema(schema: dict) -> dict:
    """A JSON Schema the current state must satisfy (any type)."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ActionDefinitionError(f"state_schema is not a valid JSON Schema: {exc.message}.") from None
    return schema


def state_problems(schema: dict, state) -> list[str]:
    """Why ``state`` does not satisfy ``schema`` (one sentence each, naming the value), or []."""
    return [f"{'/'.join(map(str, e.absolute_path)) or 'the state'}: {e.message}"
            for e in sorted(Draft202012Validator(schema).iter_errors(state), key=str)]


def state_facts(schema: dict, state) -> list[tuple[str, str]]:
    """The values of the state that break ``schema``, as (field, value) pairs: what a refusal may quote."""
    out = []
    for error in sorted(Draft202012Validator(schema).iter_errors(state), key=str):
        path = "/".join(map(str, error.absolute_path)) or "state"
        value = error.instance if isinstance(error.instance, (str, int, float, bool)) else "missing"
        if (path, str(value)) not in out:
            out.append((path, str(value)))
    return out


def label(schema: dict, name: str) -> str:
    """A parameter as people read it: its title, else its name."""
    spec = schema.get("properties", {}).get(name, {})
    return str(spec.get("title") or name.replace("_", " "))


@dataclass(frozen=True)
class Checked:
    """Arguments after normalising: ``params`` as they would be frozen; ``missing`` required names; ``problems``
    one sentence per wrong value (for the model: what is wrong and what to send)."""

    params: dict
    missing: tuple[str, ...] = ()
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.missing and not self.problems


def _clean(value, spec: dict):
    if isinstance(value, str):
        value = re.sub(r"\s+", " ", value).strip()[:MAX_STRING]
        if spec.get("format") == "email" and "@" in value:
            local, _, domain = value.rpartition("@")
            value = f"{local}@{domain.lower()}"
        if spec.get("type") == "integer" and re.fullmatch(r"[+-]?\d{1,15}", value):
            return int(value)
    return value


def check(schema: dict, arguments) -> Checked:
    """Normalise ``arguments`` (strings trimmed, unknown names dropped, empty values missing) and validate them."""
    arguments = arguments if isinstance(arguments, dict) else {}
    properties = schema.get("properties", {})
    params = {}
    for name, spec in properties.items():
        if name in arguments and arguments[name] not in (None, ""):
            value = _clean(arguments[name], spec if isinstance(spec, dict) else {})
            if value != "":
                params[name] = value
    missing = tuple(name for name in schema.get("required", []) if name not in params)
    problems = []
    for error in sorted(Draft202012Validator(schema, format_checker=_FORMATS).iter_errors(params), key=str):
        if error.validator == "required":
            continue
        where = "/".join(map(str, error.absolute_path)) or "the parameters"
        problems.append(f"{where}: {error.message}")
    return Checked(params, missing, tuple(problems))
