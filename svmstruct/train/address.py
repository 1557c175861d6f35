"""Reaching a Dask cluster: a scheduler's address as `learn --scheduler` and api.fit_shards take it, parsed and checked
without Dask (Run.check checks it before any data is read), reached, and the client on it or on a new local cluster of
`--workers N` (client_for), each failure one line (DistributedError, exit 5)."""
from __future__ import annotations

import os

from svmstruct.errors import SvmStructError, UsageError

CONNECT_TIMEOUT = 30.0  # seconds to reach the scheduler of --scheduler
LOCAL_START_TIMEOUT = 120.0  # seconds for the local cluster of --workers to start


class DistributedError(SvmStructError):
    """The cluster cannot be reached or keeps losing a shard's worker, exit 5."""

    exit_code = 5


def scheduler_address(text: str) -> tuple[str, int]:
    """(host, port) of a scheduler address `tcp://HOST:PORT` or `HOST:PORT` (UsageError otherwise: another
    protocol, tls:// without the security settings it needs, no host, no port or a port out of range)."""
    protocol, sep, rest = text.partition("://")
    if not sep:
        protocol, rest = "tcp", text
    if protocol == "tls":
        raise UsageError(f"--scheduler {text!r}: a tls:// scheduler needs Dask's TLS security settings, which learn "
                         "does not take; use tcp:// on a trusted network, or distributed.fit with your own Client")
    if protocol != "tcp":
        raise UsageError(f"--scheduler {text!r}: only tcp:// schedulers are supported (HOST:PORT or tcp://HOST:PORT)")
    host, colon, port = rest.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host  # [IPv6]:port
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--scheduler {text!r}: expected tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786)")
    return host, int(port)


def reachable_scheduler(text: str) -> str:
    """The address to hand to Dask after checking, within CONNECT_TIMEOUT, that something listens there
    (DistributedError, exit 5, otherwise: an unknown host or a refused port fails at once, not after
    Dask's retries)."""
    import socket

    host, port = scheduler_address(text)
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT):
            pass
    except socket.gaierror as e:
        raise DistributedError(f"cannot reach the Dask scheduler at {text}: unknown host {host} ({e.strerror})") \
            from None
    except TimeoutError:
        raise DistributedError(f"cannot reach the Dask scheduler at {text}: no answer within {CONNECT_TIMEOUT:g} s") \
            from None
    except OSError as e:
        raise DistributedError(f"cannot reach the Dask scheduler at {text}: {e.strerror or e}") from None
    return f"tcp://{host if ':' not in host else f'[{host}]'}:{port}"


def _within(seconds: float, start, failed: str, silent: str, garbled: str | None = None):
    """start() (a Dask client or cluster) in a daemon thread, waited for at most SECONDS: Dask's own timeouts do
    not cover a peer that accepts the connection and never speaks its protocol (an HTTP server). Its result, or
    DistributedError: FAILED, then why (its error, or SILENT after SECONDS, or GARBLED when an error other than
    the connection's says the peer's reply is not Dask's: a text read as a frame length asks for exabytes)."""
    import threading

    outcome: list = []

    def run():
        try:
            outcome.append((True, start()))
        except Exception as e:  # noqa: BLE001 - Dask's errors are many; each becomes one line
            outcome.append((False, e))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        raise DistributedError(f"{failed}: {silent} within {seconds:g} s")
    done, value = outcome[0]
    if not done and garbled is not None and not isinstance(value, OSError):
        raise DistributedError(f"{failed}: {garbled}")
    if not done:
        message = str(value).strip().splitlines()
        raise DistributedError(f"{failed}: {type(value).__name__}: {message[-1] if message else ''}".rstrip(": "))
    return value


def client_for(workers: int | None = None, scheduler: str | None = None, threads: int | None = None):
    """A Dask client: on the scheduler at `scheduler`, or on a new local cluster of `workers` processes
    (loopback only, no dashboard, no memory limit). Returns (client, closer, threads per worker)."""
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError("training on a cluster needs Dask: pip install 'svmstruct[distributed]'") from None
    dask.config.set({"logging.distributed": "critical"})
    import logging

    for name in ("distributed", *(name for name in logging.root.manager.loggerDict if name.startswith("distributed."))):
        logging.getLogger(name).setLevel(logging.CRITICAL)  # its errors become one line of ours
    if scheduler is not None:
        address = reachable_scheduler(scheduler)
        client = _within(CONNECT_TIMEOUT, lambda: Client(address, timeout=f"{int(CONNECT_TIMEOUT)}s"),
                         f"cannot reach the Dask scheduler at {scheduler}",
                         "something listens there, but no Dask scheduler answered",
                         "something answered there, but not in Dask's protocol (is it a Dask scheduler's port?)")
        return client, client.close, threads
    if workers is None or workers < 1:
        raise UsageError(f"a local cluster needs at least one worker, got {workers!r}")
    local = _within(LOCAL_START_TIMEOUT, lambda: LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0",
        memory_limit=0, silence_logs=logging.CRITICAL), "the local Dask cluster did not start", "it did not start")
    client = Client(local)

    def close():
        client.close()
        local.close()

    return client, close, threads or max(1, (os.cpu_count() or 1) // workers)
