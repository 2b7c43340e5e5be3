"""The real server on loopback, from the workspace's build (no mocks): `COMPANY_DATA_BIN`, else
`target/debug/company-data`. Each server gets its own SQLite file and serves the captured pages of
`tests/fixtures/origin`; webhooks may go to loopback (`--webhook-allow-private`) and are retried after 1 s.
"""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]
BINARY = Path(os.environ.get("COMPANY_DATA_BIN", ROOT / "target" / "debug" / "company-data"))
ORIGIN = ROOT / "tests" / "fixtures" / "origin"
GOOGLE = "https://www.linkedin.com/company/google"
AUDIENSE = "https://uk.linkedin.com/company/audiense/"
NOBODY = "https://www.linkedin.com/company/nobody-here"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """A running `company-data serve` and its database."""

    db: Path
    base_url: str
    process: subprocess.Popen

    def cli(self, *args: str) -> str:
        """Runs a CLI command on the server's database; its standard output."""
        done = subprocess.run(
            [str(BINARY), *args, "--db", str(self.db)], capture_output=True, text=True, check=True
        )
        return done.stdout

    def key(self, account: str, credits: str) -> str:
        """A new live key of `account`, granted `credits`."""
        return self.cli("keys", "create", "--account", account, "--credits", credits).strip().splitlines()[-1]

    def secret(self, account: str) -> str:
        return self.cli("webhooks", "secret", "--account", account).strip().splitlines()[-1]


def start_server(tmp: Path, *extra: str) -> Server:
    if not BINARY.exists():
        pytest.fail(f"no server binary at {BINARY}: build it (`cargo build -p company-data`) or set COMPANY_DATA_BIN")
    db, port = tmp / "company-data.db", free_port()
    log = open(tmp / "serve.log", "w")
    process = subprocess.Popen(
        [
            str(BINARY), "serve", "--db", str(db), "--listen", f"127.0.0.1:{port}", "--origin", str(ORIGIN),
            "--webhook-allow-private", "--webhook-first-retry", "1", *extra,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited: {(tmp / 'serve.log').read_text()}")
        try:
            if httpx.get(f"{base_url}/healthz", timeout=1).status_code == 200:
                return Server(db, base_url, process)
        except httpx.TransportError:
            time.sleep(0.05)
    process.kill()
    pytest.fail("the server did not answer /healthz within 30 s")


def stop(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory):
    running = start_server(tmp_path_factory.mktemp("server"))
    yield running
    stop(running)


@pytest.fixture(scope="session")
def slow_server(tmp_path_factory: pytest.TempPathFactory):
    """A server whose keys may make one request per 2 s after a burst of one: the second request in a row is
    answered 429 with `Retry-After`."""
    running = start_server(tmp_path_factory.mktemp("slow"), "--key-rate", "0.5", "--key-burst", "1")
    yield running
    stop(running)


@dataclass
class Receiver:
    """A webhook receiver on loopback that keeps what it gets and answers 503 to its first `failures`."""

    url: str
    failures: int
    got: list[tuple[dict[str, str], bytes, int]] = field(default_factory=list)

    def wait_for(self, count: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while len([g for g in self.got if g[2] == 200]) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"the receiver got {self.got} within {timeout} s")
            time.sleep(0.05)


@pytest.fixture
def receiver():
    state = Receiver(url="", failures=1)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            status = 503 if len(state.got) < state.failures else 200
            state.got.append(({k.lower(): v for k, v in self.headers.items()}, body, status))
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/resume?execution=41"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
