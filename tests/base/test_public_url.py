"""COBERTURA_PUBLIC_URL: an absolute http(s) address (a path allowed, its trailing slash dropped), or a clear error
naming the variable; unset, the endpoint's address is the one it listens on."""
from __future__ import annotations

import pytest

from core.base.config import ConfigError, load_settings


def settings(tmp_path, **env):
    return load_settings({"COBERTURA_DATA_DIR": str(tmp_path), **env})


@pytest.mark.parametrize("value, url", [
    ("https://chat.example.com", "https://chat.example.com"),
    ("https://chat.example.com/", "https://chat.example.com"),
    ("  http://127.0.0.1:8300  ", "http://127.0.0.1:8300"),
    ("https://www.example.com/chat/", "https://www.example.com/chat"),
    ("http://[::1]:8300", "http://[::1]:8300"),
])
def test_a_public_url_is_the_endpoints_address(tmp_path, value, url):
    got = settings(tmp_path, COBERTURA_PUBLIC_URL=value)
    assert got.public_url == url and got.endpoint_url == url


@pytest.mark.parametrize("value", ["chat.example.com", "ftp://chat.example.com", "https://", "javascript:alert(1)",
                                   "https://chat.example.com/?a=1", "https://chat.example.com/#x",
                                   "https://user:pw@chat.example.com", "https://chat.example.com:port",
                                   "https://chat example.com", "/chat"])
def test_anything_else_is_refused_naming_the_variable(tmp_path, value):
    with pytest.raises(ConfigError, match=r"COBERTURA_PUBLIC_URL must be the absolute http\(s\) address .* not "):
        settings(tmp_path, COBERTURA_PUBLIC_URL=value)


def test_unset_the_address_is_the_listening_one(tmp_path):
    assert settings(tmp_path).endpoint_url == "http://127.0.0.1:8300"
    assert settings(tmp_path, COBERTURA_PUBLIC_URL="").public_url == ""
    assert settings(tmp_path, COBERTURA_API_HOST="::1", COBERTURA_API_PORT="9000").endpoint_url == "http://[::1]:9000"


def test_the_endpoint_refuses_to_start_on_a_bad_one(tmp_path, monkeypatch, capsys):
    from api.__main__ import main

    monkeypatch.setenv("COBERTURA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COBERTURA_PUBLIC_URL", "chat.example.com")
    assert main() == 2
    assert "error: COBERTURA_PUBLIC_URL must be the absolute http(s) address" in capsys.readouterr().err
