"""structlog set-up: a console renderer for people, JSON lines for the service, and redaction.

`Redactor` is the last processor before the renderer, so no output path can skip it: it
replaces every registered secret (API key, private key in hex, AIP-80 and base64 forms)
and anything shaped like an AIP-80 private key with `[REDACTED]`, in every string of the
event, including rendered exception traces. Standard-library logging (httpx, uvicorn) goes
through the same chain. `configure_logging` is called by the CLI (`bot run` calls it
again with `running_log_level`: one output format at a time).
"""

from __future__ import annotations

import base64
import logging
import re
import sys
from collections.abc import Iterable, MutableMapping
from typing import Any, Final, Literal, TextIO
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit


def _import_structlog() -> None:
    """Import structlog without `rich`, which it would load for pretty tracebacks.

    structlog's `dev` and `tracebacks` modules import `rich` when it is installed (it
    comes with typer), about 45 ms and 5 MB at every start-up — a tenth of a short
    command such as `bot backtest`. The chain below formats exceptions itself
    (`format_exc_info` before the renderer), so rich would never render anything.
    `rich` stays importable for everyone else afterwards.
    """
    if "structlog" in sys.modules or "rich" in sys.modules:
        return
    sys.modules["rich"] = None  # type: ignore[assignment]  # `import rich` → ImportError
    try:
        import structlog  # noqa: F401  # the module object is imported again below
    finally:
        del sys.modules["rich"]


_import_structlog()

import structlog  # noqa: E402
from structlog.typing import Processor  # noqa: E402

__all__ = [
    "REDACTED",
    "Redactor",
    "configure_logging",
    "get_logger",
    "mask_url",
    "redact",
    "register_secret",
    "register_url_secrets",
    "running_log_level",
    "secret_variants",
    "url_secrets",
]

REDACTED: Final = "[REDACTED]"
# AIP-80 private keys of any scheme, and long hex runs after a "priv" hint.
_KEY_PATTERNS: Final = (
    re.compile(r"(?:ed25519|secp256k1)-priv-0x[0-9a-fA-F]+"),
    re.compile(r"(?i)(?<=priv)[a-z_ ]*[:=]\s*(?:0x)?[0-9a-fA-F]{64}"),
)
_MIN_SECRET_LEN: Final = 8
# URL path segments shown as they are: versions ("v1") and short lowercase words
# ("aptos", "mainnet-rpc"). Anything else (digits, capitals, long runs) may be a token.
_PUBLIC_SEGMENT: Final = re.compile(r"v\d{1,3}|[a-z]{1,24}(?:[-_.][a-z]{1,24}){0,3}")


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


def _secret_segments(path: str) -> list[str]:
    return [s for s in path.split("/") if s and not _PUBLIC_SEGMENT.fullmatch(s)]


def url_secrets(url: str) -> list[str]:
    """The parts of `url` that may be credentials.

    User name and password, every query value (and bare query key), and every path
    segment that looks like a token, both as written and percent-decoded.
    """
    try:
        parts = urlsplit(url)
        found = [parts.username or "", parts.password or ""]
    except ValueError:  # a malformed port or IPv6 host: treat the whole URL as secret
        return [url]
    found += [value or key for key, value in parse_qsl(parts.query, keep_blank_values=True)]
    found += _secret_segments(parts.path)
    found += [unquote(s) for s in found]
    return [s for s in dict.fromkeys(found) if s]


def mask_url(url: str) -> str:
    """`url` fit to show: user info, query and token-like path segments as `[REDACTED]`.

    `https://key@node.example/v1/Ab12Cd34/?api_key=x` →
    `https://[REDACTED]@node.example/v1/[REDACTED]/?[REDACTED]`. Scheme, host, port and
    version/word segments stay, so the reader still sees which service is meant.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return REDACTED
    if ":" in host:
        host = f"[{host}]"
    if port is not None:
        host = f"{host}:{port}"
    if parts.username is not None or parts.password is not None:
        host = f"{REDACTED}@{host}"
    path = "/".join(
        REDACTED if s and not _PUBLIC_SEGMENT.fullmatch(s) else s for s in parts.path.split("/")
    )
    query = REDACTED if parts.query else ""
    return urlunsplit((parts.scheme, host, path, query, ""))


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


def register_url_secrets(url: str) -> None:
    """Mask the credential-like parts of `url` (see `url_secrets`) in every log line.

    Parts shorter than 8 characters are not registered (they would mask ordinary words
    and numbers); `mask_url` still hides them wherever the URL itself is shown.
    """
    for secret in url_secrets(url):
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


def running_log_level(fmt: str, level: str) -> str:
    """The log level of the running bot (`bot run`, `bot once`): one format, never both.

    With the console format the person watching reads the reporter's lines (what
    happened, in words and numbers) on stdout; the structured log on stderr then only
    says warnings and errors, unless `level` is `debug` (everything). With JSON the
    structured log is the only output (the reporter prints nothing): `level` as given.
    """
    if fmt == "json" or level == "debug":
        return level
    return level if level in ("warning", "error") else "warning"


def get_logger(name: str | None = None, **bound: Any) -> Any:
    """A structlog logger, optionally bound to a component name and values."""
    logger = structlog.get_logger(name) if name else structlog.get_logger()
    return logger.bind(component=name, **bound) if name else logger.bind(**bound)
