"""Serving a knowledge base: serve (HTTP: the API, the web page, MCP) and mcp (MCP over stdio)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragsift.cli.args import _kb_path, _kind_of, _open, check_path
from ragsift.errors import InputError, os_reason


def _check_port(host: str, port: int) -> None:
    """Refuse a port that cannot be listened on (another program's, a privileged one) before
    anything loads: bound and let go at once, as the server binds it (``SO_REUSEADDR``)."""
    import errno
    import socket

    if not 1 <= port <= 65535:  # the server's own check says it the same way (ServerConfig)
        raise InputError(f"--port must be from 1 to 65535; got {port}")
    try:
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    except OSError as e:
        raise InputError(f"cannot serve on {host}: {os_reason(e)}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise InputError(f"port {port} on {host} is busy (another program is listening on it): stop it, or "
                             f"serve on another port with --port") from None
        if e.errno == errno.EACCES:
            raise InputError(f"port {port} on {host} needs more privileges to be served on: choose a port above "
                             "1023 with --port") from None
        raise InputError(f"cannot serve on {host} port {port}: {os_reason(e)}") from None
    except (OverflowError, UnicodeError) as e:
        raise InputError(f"cannot serve on {host!r} port {port}: {e}") from None
    finally:
        sock.close()


def cmd_serve(args: argparse.Namespace) -> int:
    import math

    _check_port(args.host, args.port)  # a busy port told at once, not after the knowledge base and models load

    import uvicorn

    from ragsift.server import Limits, ServerConfig, create_app, load_keys

    given = {}
    for field, (_, _, flag) in Limits.BOUNDS.items():
        value = getattr(args, flag[2:].replace("-", "_"))
        if value is not None:
            given[field] = value * (1 << 20) if field.endswith("_bytes") else value
    for field in ("max_body_bytes", "max_upload_bytes"):  # whole bytes, once checked as finite
        if field in given and math.isfinite(given[field]):
            given[field] = int(given[field])
    limits = Limits(**given)
    sync_dirs = {}
    for spec in args.sync_dir or []:
        name, sep, folder = spec.partition("=") if "=" in spec else ("default" if not args.kb_root else
                                                                   args.default_kb, "=", spec)
        if _kind_of(check_path(folder, f"--sync-dir {name}=")) != "a directory":
            raise InputError(f"--sync-dir {spec!r}: {folder} is not a folder")
        sync_dirs[name] = Path(folder).resolve()
    cfg = ServerConfig(kb=None if args.kb_root else _kb_path(args),
                       kb_root=check_path(args.kb_root, "--kb-root", "dir", store=True) if args.kb_root is not None
                       else None,
                       default_kb=args.default_kb, host=args.host, port=args.port, keys=load_keys(args.keys_file),
                       insecure=args.insecure_no_auth, limits=limits, mcp=not args.no_mcp,
                       mcp_ingest=args.mcp_ingest, embedder=args.embedder or "", sync_dirs=sync_dirs,
                       workers=args.workers)
    cfg.check_bind()
    # the default knowledge base is opened (made when missing) before serving: what is wrong with it (a
    # folder that cannot be made, a damaged settings file, an embedder that does not load) is told in one
    # line here, not in the traceback of a server's failed startup
    app = None
    if cfg.workers > 1:  # nothing opened before the workers fork (LanceDB and the models run threads): its folder
        folder = cfg.kb if cfg.kb is not None else cfg.kb_root / cfg.default_kb  # type: ignore[operator]
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(f"cannot create the knowledge base at {folder}: {os_reason(e, folder)}") from None
    else:
        app = create_app(cfg)
        try:
            app.state.server.start()  # the server's own startup then finds it open
        except BaseException:
            app.state.server.stop()
            raise
    where = f"{cfg.kb_root} (by name)" if cfg.kb_root else str(cfg.kb)
    print(f"ragsift serving {where} on http://{args.host}:{args.port}/ (API /v1, docs /docs"
          f"{', MCP /mcp' if cfg.mcp else ''}); {len(cfg.keys)} API key(s)"
          f"{f'; {cfg.workers} workers' if cfg.workers > 1 else ''}", file=sys.stderr)
    if app is None:
        from ragsift.server.workers import serve

        return serve(cfg, args.log_level)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from ragsift.mcp import serve_stdio

    serve_stdio(_open(args), allow_ingest=args.allow_ingest)
    return 0


def _serve_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; another address "
                                                      "needs API keys or --insecure-no-auth)")
    s.add_argument("--port", type=int, default=8321)
    s.add_argument("--workers", type=int, default=1, help="processes answering on the port, so queries use every "
                                                        "core (default 1; rate limits and /metrics are per worker)")
    s.add_argument("--kb-root", help="serve every knowledge base under this directory by name (/v1/kbs/NAME)")
    s.add_argument("--default-kb", default="default", help="with --kb-root: the one served at /v1")
    s.add_argument("--keys-file", help="API keys, one a line: KEY [read|write]; also $RAGSIFT_API_KEYS (write) "
                                       "and $RAGSIFT_READ_KEYS (read only)")
    s.add_argument("--insecure-no-auth", action="store_true", help="serve a non-loopback address without keys")
    s.add_argument("--no-mcp", action="store_true", help="do not mount the MCP server at /mcp")
    s.add_argument("--mcp-ingest", action="store_true", help="enable the MCP add_documents tool (write keys)")
    s.add_argument("--embedder", help="embedder of knowledge bases the server creates")
    s.add_argument("--sync-dir", action="append", metavar="[NAME=]FOLDER",
                   help="a folder POST /v1/sync (or /v1/kbs/NAME/sync) mirrors into the knowledge base (write keys); "
                        "repeat for several knowledge bases")
    g = s.add_argument_group("limits (each passed is a clear 4xx)")
    g.add_argument("--max-body-mb", type=float, help="largest JSON request (default 16)")
    g.add_argument("--max-upload-mb", type=float, help="largest upload request, all files (default 64)")
    g.add_argument("--max-batch", type=int, help="most queries in one batch (default 32)")
    g.add_argument("--max-files", type=int, help="most files in one upload (default 100)")
    g.add_argument("--max-documents", type=int, help="most documents in one JSON ingest request (default 1000)")
    g.add_argument("--max-page", type=int, help="most documents in one page of a listing (default 500)")
    g.add_argument("--max-query-seconds", type=float, help="a query's (or a batch's) whole time (default 120)")
    g.add_argument("--max-queued-jobs", type=int, help="writes (ingests, deletes) waiting per knowledge base; "
                                                      "past it a write is a 503 with Retry-After (default 64)")
    g.add_argument("--rate-limit", type=float, help="requests a second per API key, or per client address "
                                                   "without keys; past it a 429 with Retry-After (default 50)")
    g.add_argument("--rate-burst", type=int, help="requests a key may send at once (default 100)")
    g.add_argument("--max-inflight", type=int, help="requests of one key answered at once (default 8)")
    s.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"])
    s.set_defaults(func=cmd_serve)


def _mcp_command(s: argparse.ArgumentParser) -> None:
    s.add_argument("--allow-ingest", action="store_true", help="enable the add_documents tool")
    s.set_defaults(func=cmd_mcp)

