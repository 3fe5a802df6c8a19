"""Settings, environment and connect()'s choice between a configured service and the sandbox."""

from __future__ import annotations

import pytest

import imagekit
from imagekit import embedded
from imagekit.config import Config
from imagekit.home import home_dir
from tests.utils.scripted_http import SECRET


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ("IMAGEKIT_BASE_URL", "IMAGEKIT_API_KEY", "IMAGEKIT_HOME"):
        monkeypatch.delenv(name, raising=False)


def test_config_needs_a_url_and_a_key():
    with pytest.raises(imagekit.ConfigError, match="no base URL"):
        Config.from_env(api_key="k")
    with pytest.raises(imagekit.ConfigError, match="no API key"):
        Config.from_env(base_url="http://x")


def test_config_reads_the_environment(monkeypatch):
    monkeypatch.setenv("IMAGEKIT_BASE_URL", "http://service.test/")
    monkeypatch.setenv("IMAGEKIT_API_KEY", SECRET)
    config = Config.from_env()
    assert (config.base_url, config.api_key) == ("http://service.test", SECRET)
    assert Config.from_env("http://other", "k2").base_url == "http://other"


def test_config_and_client_reprs_hide_the_key():
    config = Config("http://x", SECRET)
    for text in (repr(config), str(config), repr(imagekit.Client("http://x", SECRET)),
                 repr(imagekit.AsyncClient("http://x", SECRET))):
        assert SECRET not in text
    assert "api_key='****'" in repr(config)


def test_home_dir(monkeypatch, tmp_path):
    assert home_dir().name == ".imagekit"
    monkeypatch.setenv("IMAGEKIT_HOME", str(tmp_path))
    assert home_dir() == tmp_path


def test_connect_uses_the_environment_when_set(monkeypatch):
    monkeypatch.setattr(embedded, "_embedded_sandbox", lambda: pytest.fail("must not start a sandbox"))
    monkeypatch.setenv("IMAGEKIT_BASE_URL", "http://service.test")
    monkeypatch.setenv("IMAGEKIT_API_KEY", SECRET)
    ik = imagekit.connect(timeout=5)
    assert isinstance(ik, imagekit.Client) and ik.config.base_url == "http://service.test" and ik.config.timeout == 5
    assert isinstance(imagekit.connect(asynchronous=True), imagekit.AsyncClient)


@pytest.mark.parametrize("only", ["IMAGEKIT_BASE_URL", "IMAGEKIT_API_KEY"])
def test_connect_refuses_half_a_configuration(monkeypatch, only):
    monkeypatch.setenv(only, "x")
    with pytest.raises(imagekit.ConfigError, match="set both"):
        imagekit.connect()


def test_connect_falls_back_to_the_embedded_sandbox(monkeypatch):
    class FakeSandbox:
        url, api_key, identity, joined = "http://127.0.0.1:9", SECRET, "folder-id", False

    monkeypatch.setattr(embedded, "_embedded_sandbox", lambda spec_exact, folder: FakeSandbox)
    ik = imagekit.connect()
    assert ik.config.base_url == "http://127.0.0.1:9" and ik.config.api_key == SECRET
    # The ledger knows the sandbox by its data folder, not by its port or the session's key.
    assert ik.ledger.account == imagekit.ledger.sandbox_account("folder-id")
    assert ik.config.service == "imagekit sandbox folder-id"  # and so do tags (MLflow's imagekit.service)
    assert ik.with_options(timeout=5).config.service == ik.config.service


@pytest.mark.parametrize(("base_url", "service"), [
    ("https://api.example.com/v1/", "https://api.example.com/v1"),
    ("https://me:secret@api.example.com:8443/v1?token=x#top", "https://api.example.com:8443/v1"),
    ("http://[::1]:8800", "http://[::1]:8800"),
])
def test_a_service_is_named_by_its_address_without_user_password_or_query(base_url, service):
    config = Config(base_url=base_url, api_key=SECRET)
    assert config.service == service
    assert config.updated({}, base_url="https://other.example.com").service == "https://other.example.com"
    assert config.updated({"service": "staging"}).service == "staging"


@pytest.mark.parametrize(("missing", "raised"), [("fastapi", imagekit.ConfigError), ("imagekit.sandbox.x", ModuleNotFoundError)])
def test_a_missing_sandbox_extra_is_explained(monkeypatch, tmp_path, missing, raised):
    from imagekit.sandbox import EmbeddedSandbox

    def start(self):
        raise ModuleNotFoundError(f"No module named {missing!r}", name=missing)

    monkeypatch.setenv("IMAGEKIT_HOME", str(tmp_path))
    monkeypatch.setattr(embedded, "_embedded", {})
    monkeypatch.setattr(EmbeddedSandbox, "start", start)
    with pytest.raises(raised) as info:
        imagekit.connect()
    assert type(info.value) is raised and (raised is not imagekit.ConfigError or "imagekit[sandbox]" in str(info.value))
