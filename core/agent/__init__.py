"""The support agent: the tool loop (``Agent.answer``: provider <-> tools <-> gate, writes nothing), its typed
outcome, the tool registry and the built-in tools, prompts, the injection guard, follow-ups, cancellation and
``providers/``. Imports ``core.base``, ``core.tenancy``, ``core.knowledge`` and ``core.grounding``; never the
runtime (it receives its services) nor the packages above it."""
