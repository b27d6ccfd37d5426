"""How a server runs: what it serves, who may call it, and its limits.

API keys are bearer tokens. ``RAGSIFT_API_KEYS`` (comma-separated) holds keys that may read and
write (ingest, delete); ``RAGSIFT_READ_KEYS`` keys that may only read; a keys file holds one key
a line, optionally followed by ``read`` or ``write`` (the default). Keys never come from a
knowledge base's settings file. Without keys the server binds a loopback address only, unless
it is told explicitly that it may run open (``insecure``).
"""
from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from ragsift.errors import ConfigError

READ, WRITE = "read", "write"


@dataclass(frozen=True)
class Limits:
    """Request limits; each, when passed, is a 413 (or 422) with a problem body."""

    max_body_bytes: int = 16 * 1024 * 1024  # a JSON request (queries, documents)
    max_upload_bytes: int = 64 * 1024 * 1024  # one upload request, every file in it
    max_files: int = 100  # files in one upload
    max_batch: int = 32  # queries in one batch
    max_documents: int = 1000  # documents in one JSON ingest request
    max_page: int = 500  # documents in one page of a listing


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
        for n, line in enumerate(lines, 1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            role = parts[1] if len(parts) > 1 else WRITE
            if len(parts) > 2 or role not in (READ, WRITE):
                raise ConfigError(f"{keys_file}:{n}: expected 'KEY [read|write]'")
            keys[parts[0]] = role
    short = [k for k in keys if len(k) < 16]
    if short:
        raise ConfigError(f"API keys must be at least 16 characters ({len(short)} shorter)")
    return keys
