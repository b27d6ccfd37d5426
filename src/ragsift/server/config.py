"""How a server runs: what it serves, who may call it, and its limits.

API keys are bearer tokens. ``RAGSIFT_API_KEYS`` (comma-separated) holds keys that may read and
write (ingest, delete); ``RAGSIFT_READ_KEYS`` keys that may only read; a keys file holds one key
a line, optionally followed by ``read`` or ``write`` (the default). Keys never come from a
knowledge base's settings file. Without keys the server binds a loopback address only, unless
it is told explicitly that it may run open (``insecure``).
"""
from __future__ import annotations

import ipaddress
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from ragsift.errors import ConfigError

READ, WRITE = "read", "write"
MAX_WORKERS = 64
#: a knowledge base's name under --kb-root (a directory name: no path separators, no dot first)
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class Limits:
    """Request limits; each, when passed, is a clear 4xx with a problem body (413 for sizes and
    counts, 429 for rates, 503 for a full write queue), never a wait without end."""

    max_body_bytes: int = 16 * 1024 * 1024  # a JSON request (queries, documents)
    max_upload_bytes: int = 64 * 1024 * 1024  # one upload request, every file in it
    max_files: int = 100  # files in one upload
    max_batch: int = 32  # queries in one batch
    max_documents: int = 1000  # documents in one JSON ingest request
    max_page: int = 500  # documents in one page of a listing
    max_query_seconds: float = 120.0  # a query's (or a batch's) whole time, whatever its timeouts say
    max_queued_jobs: int = 64  # writes (ingests, deletes) queued per knowledge base
    rate_per_s: float = 50.0  # requests a second per key (per client address without keys)
    rate_burst: int = 100  # requests a key may send at once before the rate applies
    max_inflight: int = 8  # requests of one key being answered at once

    #: each limit's bounds (inclusive) and the flag that sets it
    BOUNDS: ClassVar[dict[str, tuple[float, float, str]]] = {
        "max_body_bytes": (1024, 1 << 34, "--max-body-mb"),
        "max_upload_bytes": (1024, 1 << 40, "--max-upload-mb"),
        "max_files": (1, 100_000, "--max-files"),
        "max_batch": (1, 10_000, "--max-batch"),
        "max_documents": (1, 1_000_000, "--max-documents"),
        "max_page": (1, 100_000, "--max-page"),
        "max_query_seconds": (0.1, 86_400, "--max-query-seconds"),
        "max_queued_jobs": (1, 100_000, "--max-queued-jobs"),
        "rate_per_s": (0.01, 1_000_000, "--rate-limit"),
        "rate_burst": (1, 1_000_000, "--rate-burst"),
        "max_inflight": (1, 10_000, "--max-inflight"),
    }

    def __post_init__(self) -> None:
        for name, (lo, hi, flag) in self.BOUNDS.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not lo <= v <= hi:
                shown = v if name not in ("max_body_bytes", "max_upload_bytes") or not isinstance(v, (int, float)) \
                    else f"{v / (1 << 20):g} MB"
                raise ConfigError(f"{flag} must be a finite number from {_shown(name, lo)} to {_shown(name, hi)}; "
                                  f"got {shown}")


def _shown(name: str, v: float) -> str:
    return f"{v / (1 << 20):g} MB" if name.endswith("_bytes") else f"{v:g}"


@dataclass(frozen=True)
class ServerConfig:
    kb: Path | None = None  # one knowledge base, served as "default"
    kb_root: Path | None = None  # or every knowledge base under this directory, by name
    default_kb: str = "default"
    host: str = "127.0.0.1"
    port: int = 8321
    keys: dict[str, str] = field(default_factory=dict)  # key -> "read" | "write"
    insecure: bool = False  # serve a non-loopback address without keys (told explicitly)
    limits: Limits = Limits()
    mcp: bool = True  # mount the MCP server at /mcp
    mcp_ingest: bool = False  # the MCP ingest tool (write keys only)
    embedder: str = ""  # embedder of knowledge bases the server creates ("" = the default)
    sync_dirs: dict[str, Path] = field(default_factory=dict)  # knowledge base -> the folder POST /sync mirrors
    workers: int = 1  # processes answering on one port (ragsift.server.workers)

    def __post_init__(self) -> None:
        if isinstance(self.port, bool) or not isinstance(self.port, int) or not 1 <= self.port <= 65535:
            raise ConfigError(f"--port must be from 1 to 65535; got {self.port}")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or not 1 <= self.workers <= MAX_WORKERS:
            raise ConfigError(f"--workers must be from 1 to {MAX_WORKERS}; got {self.workers}")
        if not self.host or any(c.isspace() for c in self.host):
            raise ConfigError(f"--host must be an address or a host name; got {self.host!r}")
        if not NAME_RE.match(self.default_kb):
            raise ConfigError(f"--default-kb must be a knowledge-base name (letters, digits, '_' and '-', at most "
                              f"64, not starting with '_' or '-'); got {self.default_kb!r}")
        for what, p in (("--kb", self.kb), ("--kb-root", self.kb_root)):
            if p is not None and p.exists() and not p.is_dir():
                raise ConfigError(f"{what} {p} is a file, not a directory")

    def check_bind(self) -> None:
        """Refuse to serve a non-loopback address without keys, unless told it is insecure."""
        if self.keys or self.insecure:
            return
        if not is_loopback(self.host):
            raise ConfigError(f"refusing to serve {self.host} without API keys: set RAGSIFT_API_KEYS (or "
                              "--keys-file), bind 127.0.0.1, or pass --insecure-no-auth to serve it open")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def load_keys(keys_file: str | Path | None = None, environ: dict[str, str] | None = None) -> dict[str, str]:
    """Keys from the environment and an optional file: key -> "read" or "write"."""
    env = os.environ if environ is None else environ
    keys: dict[str, str] = {}
    for var, role in (("RAGSIFT_READ_KEYS", READ), ("RAGSIFT_API_KEYS", WRITE)):
        for k in env.get(var, "").split(","):
            if k.strip():
                keys[k.strip()] = role
    if keys_file:
        try:
            lines = Path(keys_file).read_text(encoding="utf-8").splitlines()
        except OSError as e:
            raise ConfigError(f"cannot read keys file {keys_file}: {e.strerror or e}") from None
        except UnicodeDecodeError as e:
            raise ConfigError(f"keys file {keys_file} is not UTF-8 text (byte 0x{e.object[e.start]:02x} at "
                              f"offset {e.start})") from None
        for n, line in enumerate(lines, 1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            role = parts[1] if len(parts) > 1 else WRITE
            if len(parts) > 2 or role not in (READ, WRITE):
                raise ConfigError(f"{keys_file}:{n}: expected 'KEY [read|write]'")
            keys[parts[0]] = role
    odd = [k for k in keys if not all("!" <= c <= "~" for c in k)]
    if odd:
        raise ConfigError(f"API keys must be printable ASCII without spaces ({len(odd)} are not)")
    short = [k for k in keys if len(k) < 16]
    if short:
        raise ConfigError(f"API keys must be at least 16 characters ({len(short)} shorter)")
    return keys
