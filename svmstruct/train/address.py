"""A Dask scheduler's address as `learn --scheduler` and distributed.fit take it, parsed and checked without Dask
(Run.check checks it before any data is read; distributed connects to it)."""
from svmstruct.errors import UsageError


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
