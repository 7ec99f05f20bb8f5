"""The native Python bridge's runner: ASGI and WSGI applications served to
scalwsd's python_bridge_pass over the bridge's framing (docs/python-bridge.md).

    python3 -m scalws_bridge --app module:app [--interface asgi|wsgi]
                             [--socket PATH | --fd N] [--workers N]

The frames are read, and scopes and environs built, by the C extension
_bridge; this package holds the servers' loops (asgi.py, wsgi.py) and the
process that runs N of them (server.py).
"""

__all__ = ["main"]


def main(argv=None):
    from .server import main as _main
    return _main(argv)
