"""structlog set-up: a console renderer for people, JSON lines for the service, and redaction.

`Redactor` is the last processor before the renderer, so no output path can skip it: it
replaces every registered secret (API key, private key in hex, AIP-80 and base64 forms)
and anything shaped like an AIP-80 private key with `[REDACTED]`, in every string of the
event, including rendered exception traces. Standard-library logging (httpx, uvicorn) goes
through the same chain. `configure_logging` is called once, by the CLI.
"""

from __future__ import annotations

import base64
import logging
import re
import sys
from collections.abc import Iterable, MutableMapping
from typing import Any, Final, Literal, TextIO

import structlog
from structlog.typing import Processor

__all__ = [
    "REDACTED",
    "Redactor",
    "configure_logging",
    "get_logger",
    "redact",
    "register_secret",
    "secret_variants",
]

REDACTED: Final = "[REDACTED]"
# AIP-80 private keys of any scheme, and long hex runs after a "priv" hint.
_KEY_PATTERNS: Final = (
    re.compile(r"(?:ed25519|secp256k1)-priv-0x[0-9a-fA-F]+"),
    re.compile(r"(?i)(?<=priv)[a-z_ ]*[:=]\s*(?:0x)?[0-9a-fA-F]{64}"),
)
_MIN_SECRET_LEN: Final = 8


def secret_variants(secret: str) -> set[str]:
    """The forms a secret may appear in.

    As given, without/with `0x`, and for hex keys also their AIP-80 and base64 encodings.
    """
    text = secret.strip()
    variants = {text}
    bare = text[2:] if text.lower().startswith("0x") else text
    if bare.startswith(("ed25519-priv-0x", "secp256k1-priv-0x")):
        bare = bare.split("-priv-0x", 1)[1]
    if re.fullmatch(r"[0-9a-fA-F]+", bare) and len(bare) % 2 == 0:
        raw = bytes.fromhex(bare)
        for form in (bare.lower(), bare.upper()):
            variants.update({form, "0x" + form, f"ed25519-priv-0x{form}"})
        variants.add(base64.b64encode(raw).decode())
        variants.add(base64.urlsafe_b64encode(raw).decode().rstrip("="))
        variants.add(base64.b64encode(raw).decode().rstrip("="))
    return {v for v in variants if len(v) >= _MIN_SECRET_LEN}


class Redactor:
    """A structlog processor masking registered secrets and key-shaped text everywhere."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str) -> None:
        """Register one more secret (e.g. once a key file is loaded)."""
        if secret and len(secret.strip()) >= _MIN_SECRET_LEN:
            self._secrets |= secret_variants(secret)
            ordered = sorted(self._secrets, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(s) for s in ordered))

    def redact(self, text: str) -> str:
        """Mask every secret and key-shaped run in `text`."""
        if self._pattern is not None:
            text = self._pattern.sub(REDACTED, text)
        for pattern in _KEY_PATTERNS:
            text = pattern.sub(REDACTED, text)
        return text

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {k: self._walk(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self._walk(v) for v in value)
        if isinstance(value, int | float | bool) or value is None:
            return value
        if isinstance(value, BaseException):
            return self.redact(f"{type(value).__name__}: {value}")
        return self.redact(str(value))

    def __call__(
        self, logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        """Redact every value of the event (the structlog processor protocol)."""
        for key in list(event_dict):
            event_dict[key] = self._walk(event_dict[key])
        return event_dict


_ACTIVE_REDACTOR: Final = Redactor()


def redact(text: str) -> str:
    """`text` with every registered secret and key-shaped string masked.

    For text that leaves the process other than through the logs (an alert, say).
    """
    return _ACTIVE_REDACTOR.redact(text)


class _CurrentStderr:
    """Writes to whatever `sys.stderr` is at the time of the write.

    Binding the stream object at configuration time breaks when it is later replaced and
    closed (test runners, CLI runners capture stderr per invocation).
    """

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()


def register_secret(secret: str) -> None:
    """Mask `secret` (in all its forms) in every log line from now on.

    Called wherever a secret is loaded (API client, key loader), so no code path has to
    remember to do it. Logging is process-wide by nature; so is this list.
    """
    _ACTIVE_REDACTOR.add(secret)


def configure_logging(
    *,
    fmt: Literal["console", "json"] = "console",
    level: str = "info",
    stream: TextIO | None = None,
) -> Redactor:
    """Configure structlog and stdlib logging for the process; returns the redactor.

    Logs go to stderr (stdout is for command output). Secrets registered before or after
    this call are masked.
    """
    redactor = _ACTIVE_REDACTOR
    out: TextIO = stream or _CurrentStderr()  # type: ignore[assignment]
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: Processor = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=out.isatty())
    )
    tail: list[Processor] = [
        structlog.processors.format_exc_info,
        redactor,
        renderer,
    ]
    numeric = logging.getLevelNamesMapping()[level.upper()]
    structlog.configure(
        processors=[*shared, *tail],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *tail],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    # apscheduler: 2 lines per job run; alembic: "setup plugin" lines on first import.
    for noisy in ("httpx", "httpcore", "apscheduler", "alembic"):
        logging.getLogger(noisy).setLevel(max(numeric, logging.WARNING))
    return redactor


def get_logger(name: str | None = None, **bound: Any) -> Any:
    """A structlog logger, optionally bound to a component name and values."""
    logger = structlog.get_logger(name) if name else structlog.get_logger()
    return logger.bind(component=name, **bound) if name else logger.bind(**bound)
