"""Loopback git servers for the tests and bench/: `git daemon` serving
git:// with receive-pack, and smart HTTP through `git http-backend` behind
a threaded server from the standard library.

Both serve every bare repository under a base directory; both are started
and stopped by a context manager, which yields the URL of the base
(`git://127.0.0.1:PORT/`, `http://127.0.0.1:PORT/`): append the
repository's name."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from typing import IO
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path

HOST = '127.0.0.1'
_START_TIMEOUT = 10.0


def free_port() -> int:
    """A port nothing listens on now (the kernel's pick); the caller binds
    it soon after, and retries on the rare steal."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def _heard(stream: IO[str], ready: threading.Event, said: list[str]) -> None:
    """Read the daemon's log (--verbose) to its end: ready is set when it
    says it listens, or when it exited without (it could not bind)."""
    for line in stream:
        if 'Ready to rumble' in line:
            said.insert(0, '')  # the mark: it listens
            ready.set()
        elif len(said) < 100:
            said.append(line)
    ready.set()


def bare(base: Path, name: str = 'remote.git') -> Path:
    """An empty bare repository under base, as a server would keep it."""
    path = base / name
    subprocess.run(
        ('git', 'init', '-q', '--bare', str(path)), check=True,
        capture_output=True,
    )
    return path


def seeded(base: Path, name: str = 'remote.git') -> tuple[Path, Path]:
    """(a bare repository under base with one code commit on main, the
    repository that pushed it: base/seed, whose origin is the bare one)."""
    from testing.util import git
    path = bare(base, name)
    git('symbolic-ref', 'HEAD', 'refs/heads/main', cwd=path)
    seed = base / 'seed'
    seed.mkdir()
    git('init', '-q', '-b', 'main', cwd=seed)
    (seed / 'README').write_text('hello\n')
    git('add', '.', cwd=seed)
    git('commit', '-q', '-m', 'initial', cwd=seed)
    git('remote', 'add', 'origin', f'file://{path}', cwd=seed)
    git('push', '-q', '-u', 'origin', 'main', cwd=seed)
    return path, seed


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop the daemon and the children it forked per connection (its own
    process group: started with start_new_session)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # children still in the group after the daemon exited
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@contextmanager
def daemon(base: Path, *, max_connections: int = 64) -> Iterator[str]:
    """`git daemon --enable=receive-pack` on a free loopback port, serving
    every repository under base; yields git://127.0.0.1:PORT/."""
    for _ in range(5):
        port = free_port()
        proc = subprocess.Popen(
            (
                'git', 'daemon', '--enable=receive-pack', '--export-all',
                f'--base-path={base}', f'--port={port}', '--reuseaddr',
                f'--listen={HOST}', f'--max-connections={max_connections}',
                '--informative-errors', '--verbose', str(base),
            ),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, start_new_session=True, text=True,
            errors='replace',
        )
        # its own word that it listens, not a connection to the port: under
        # pytest-xdist another worker's daemon may hold the same port for a
        # moment (the one here then fails to bind, and says so)
        ready = threading.Event()
        said: list[str] = []
        assert proc.stderr is not None
        reader = threading.Thread(target=_heard, args=(proc.stderr, ready, said), daemon=True)
        reader.start()
        if not ready.wait(_START_TIMEOUT):
            _stop_group(proc)
            raise RuntimeError(f'git daemon did not listen on {port}')
        if said[:1] == [''] and proc.poll() is None:
            break
        # the port was taken between free_port() and the bind: another one
        _stop_group(proc)
        reader.join()
    else:
        raise RuntimeError(f'git daemon did not start: {"".join(said).strip()}')
    try:
        yield f'git://{HOST}:{port}/'
    finally:
        _stop_group(proc)
        reader.join()
        proc.stderr.close()


# -- smart HTTP ----------------------------------------------------------------

def _read_chunked(rfile: object) -> bytes:
    """A request body sent with Transfer-Encoding: chunked (git does for
    a pack over http.postBuffer)."""
    out = bytearray()
    readline = getattr(rfile, 'readline')
    read = getattr(rfile, 'read')
    while True:
        size = int(readline().split(b';', 1)[0].strip(), 16)
        if size == 0:
            while readline().strip():  # trailers
                pass
            return bytes(out)
        out += read(size)
        readline()  # the CRLF after the chunk


def _cgi_response(output: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
    """Split a CGI program's output into status, headers, body."""
    head, sep, body = output.partition(b'\r\n\r\n')
    if not sep:
        head, _, body = output.partition(b'\n\n')
    status = 200
    headers = []
    for line in head.decode('latin-1').splitlines():
        name, _, value = line.partition(':')
        if name.lower() == 'status':
            status = int(value.strip().split()[0])
        elif name:
            headers.append((name.strip(), value.strip()))
    return status, headers, body


class _Backend(BaseHTTPRequestHandler):
    """Each request runs `git http-backend` as a CGI program."""

    protocol_version = 'HTTP/1.0'  # one request per connection: simple
    root = Path()
    # pushes still to turn away with 503 (as a proxy in front of a busy
    # server does), and how many were; one list per server, under a lock
    busy: list[int] = [0, 0]
    lock = threading.Lock()

    def _turned_away(self, path: str) -> bool:
        if self.command != 'POST' or not path.endswith('/git-receive-pack'):
            return False
        with self.lock:
            if self.busy[0] <= 0:
                return False
            self.busy[0] -= 1
            self.busy[1] += 1
        return True

    def _cgi(self) -> None:
        path, _, query = self.path.partition('?')
        if self.headers.get('Transfer-Encoding', '').lower() == 'chunked':
            body = _read_chunked(self.rfile)
        else:
            body = self.rfile.read(int(self.headers.get('Content-Length') or 0))
        if self._turned_away(path):
            self.send_response(503)
            self.send_header('Content-Length', '0')
            self.end_headers()
            return
        env = {
            k: v for k, v in os.environ.items()
            if not k.startswith('GIT_') or k.startswith('GIT_CONFIG')
        }
        env.update({
            'GATEWAY_INTERFACE': 'CGI/1.1',
            'SERVER_PROTOCOL': 'HTTP/1.0',
            'REQUEST_METHOD': self.command,
            'PATH_INFO': path,
            'QUERY_STRING': query,
            'CONTENT_TYPE': self.headers.get('Content-Type', ''),
            'CONTENT_LENGTH': str(len(body)),
            'REMOTE_ADDR': self.client_address[0],
            'GIT_PROJECT_ROOT': str(self.root),
            'GIT_HTTP_EXPORT_ALL': '1',
            # receive-pack without authentication (loopback tests only)
            'GIT_CONFIG_COUNT': '1',
            'GIT_CONFIG_KEY_0': 'http.receivepack',
            'GIT_CONFIG_VALUE_0': 'true',
        })
        for name in ('Content-Encoding', 'Git-Protocol'):
            if name in self.headers:
                env['HTTP_' + name.upper().replace('-', '_')] = self.headers[name]
        proc = subprocess.run(
            ('git', 'http-backend'), input=body, env=env, capture_output=True,
        )
        status, headers, out = _cgi_response(proc.stdout)
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header('Content-Length', str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = _cgi
    do_POST = _cgi

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: git's own errors reach the client


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64  # many clients connect at once


class Busy:
    """How many pushes an http() server turns away with 503 from now on
    (`left`), and has turned away so far (`turned_away`)."""

    def __init__(self, counts: list[int]) -> None:
        self._counts = counts

    @property
    def left(self) -> int:
        return self._counts[0]

    @left.setter
    def left(self, n: int) -> None:
        self._counts[0] = n

    @property
    def turned_away(self) -> int:
        return self._counts[1]


@contextmanager
def http(base: Path) -> Iterator[str]:
    """Smart HTTP (`git http-backend`) for every repository under base,
    served by a thread per request; yields http://127.0.0.1:PORT/."""
    with http_busy(base) as (url, _):
        yield url


@contextmanager
def http_busy(base: Path) -> Iterator[tuple[str, Busy]]:
    """http(), and the Busy setting with which a test makes it turn pushes
    away (HTTP 503) as an overloaded server does."""
    counts = [0, 0]
    handler = type('Backend', (_Backend,), {
        'root': base, 'busy': counts, 'lock': threading.Lock(),
    })
    server = _Server((HOST, 0), handler)
    port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05})
    thread.start()
    try:
        yield f'http://{HOST}:{port}/', Busy(counts)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# -- remotes that stall ----------------------------------------------------------

@contextmanager
def silent() -> Iterator[str]:
    """A loopback TCP server that accepts every connection and never says
    a word (a remote host that hangs): yields git://127.0.0.1:PORT/."""
    server = socket.create_server((HOST, 0))
    server.settimeout(0.05)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)  # kept open, unanswered

    thread = threading.Thread(target=accept)
    thread.start()
    try:
        yield f'git://{HOST}:{server.getsockname()[1]}/'
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


# a pre-receive hook that hangs when memory refs are pushed (the code goes
# through): the remote received the pack and never reports back.  It writes
# its pid first, and gives up after a minute so that nothing outlives a test.
_HANG_ON_MEMORY = '''#!/bin/sh
while read old new ref; do
    case "$ref" in
    refs/agitmem/*) echo $$ > "$GIT_DIR/hung-pid"; sleep 60; exit 1 ;;
    esac
done
exit 0
'''


def hang_on_memory(bare: Path) -> Path:
    """Make bare's receive-pack hang on a push of memory refs; returns the
    file where the hanging hook writes its pid."""
    hook = bare / 'hooks' / 'pre-receive'
    hook.write_text(_HANG_ON_MEMORY)
    hook.chmod(0o755)
    return bare / 'hung-pid'


def alive(pid: int) -> bool:
    """Is process pid still running (a zombie not reaped yet counts as
    gone)?"""
    try:
        stat = Path(f'/proc/{pid}/stat').read_text()
    except OSError:
        return False
    return stat.rsplit(')', 1)[-1].split()[0] != 'Z'
