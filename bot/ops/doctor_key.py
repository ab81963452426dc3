"""`bot doctor`'s API key line: whose key the bot sends (never the key itself).

Live mode without a configured key sends Panora's public key (`bot.secrets.PUBLIC_API_KEY`,
the one its SDK publishes): it works, but everyone shares it and it is rate-limited, so the
line is a WARN telling the user to get a key of their own. Paper mode sends the paper
world's keys (`[paper].api_keys`), unless one is configured.
"""

from __future__ import annotations

from bot.config import Settings
from bot.ops.doctor import PASS, SKIP, WARN, CheckResult
from bot.secrets import SecretFileError, is_public_api_key, resolve_api_key

__all__ = ["SHARED_KEY_ADVICE", "check_api_key_source"]

SHARED_KEY_ADVICE = (
    "the public key Panora's SDK publishes: shared and rate-limited: get your own key "
    "and set BOT_API__API_KEY or [api].api_key_file"
)


def check_api_key_source(settings: Settings) -> CheckResult:
    """PASS for a key of the user's own, WARN for the shared public key (never shown)."""
    name = "API key source"
    live = settings.mode == "live"
    if not live and settings.api.api_key is None and settings.api.api_key_file is None:
        return CheckResult(name, PASS, "the paper world's key ([paper].api_keys)")
    try:
        key = resolve_api_key(settings.api.api_key, settings.api.api_key_file, live=live)
    except SecretFileError:  # reported by the "API key accepted" line
        return CheckResult(name, SKIP, "the API key file cannot be read")
    if is_public_api_key(key):
        return CheckResult(name, WARN, SHARED_KEY_ADVICE)
    given = settings.api.api_key
    from_env = given is not None and bool(given.get_secret_value())
    where = "BOT_API__API_KEY" if from_env else "[api].api_key_file"
    return CheckResult(name, PASS, f"your own key ({where})")
