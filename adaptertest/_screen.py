"""What reaches a screen: secrets masked, control characters escaped.

Every front end (the CLI table and details, Markdown, the JSON report and report file,
pytest's failure text and so JUnit, driver tracebacks) renders text the suite got from
a driver or a provider. Two things in that text must never reach a reader as they are:

* the value of a secret: the ``Options.secrets``, pydantic secrets in the config, and
  the value of every environment variable whose name is secret
  (:func:`driver.is_secret_name`, at least :data:`MIN_SECRET` characters, the rule
  ``adaptertest record`` applies), whether or not it was passed in ``Options``; each is
  matched as is, escaped by ``repr`` or JSON, or cut short before an ellipsis;
* a credential in a well-known format that arrives any other way (an exception message
  quoting ``sk-ant-api03-...``, ``ghp_...``, ``AIza...``, an ``Authorization: Bearer``
  header): every match of the format patterns of detect-secrets (Yelp's scanner, the
  maintained set most Python tooling uses; its regex detectors but the context ones, see
  :func:`key_patterns`) plus a few formats it lacks (:data:`OWN_KEY_PATTERNS`);
* control characters: a CLI's output must not retitle, clear or recolour the terminal
  of whoever reads the report. C0 controls (but newline and tab), DEL and C1 controls
  are written as ``\\xNN`` (ESC becomes the four characters ``\\x1b``).

:func:`screen` does both; it is idempotent, so a front end may apply it to text that was
screened already.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
from collections.abc import Iterable, Mapping

from driver.secret_names import is_secret_name

__all__ = [
    "MIN_SECRET",
    "OWN_KEY_PATTERNS",
    "SECRET_MASK",
    "env_secrets",
    "escape_controls",
    "key_patterns",
    "mask",
    "mask_keys",
    "screen",
]

MIN_SECRET = 4
"""Values shorter than this are not masked: ``"1"`` or ``"dev"`` would wreck the output."""
SECRET_MASK = "[secret withheld]"

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

OWN_KEY_PATTERNS: tuple[str, ...] = (
    r"sk-ant-[A-Za-z0-9_-]{16,}",  # Anthropic (api03, admin01 ...)
    r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{16,}",  # OpenAI keys without the old marker
    r"AIza[0-9A-Za-z_-]{35}",  # Google API keys (Gemini)
    r"github_pat_[A-Za-z0-9_]{22,}",  # GitHub fine-grained tokens
    r"(?i)bearer\s+[A-Za-z0-9._~+/-]{8,}=*",  # an HTTP bearer credential
    r"-----BEGIN [A-Z ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY( BLOCK)?-----",
)
"""Key formats detect-secrets 1.5 has no detector for, masked as well. Each starts with its
literal prefix and no boundary check, so the regex engine skips ahead to the prefix."""

_SKIPPED_DETECTORS = frozenset(
    {
        # Not a key format: a public IP address, and a private key's header line alone
        # (the whole PEM block is one of OWN_KEY_PATTERNS).
        "IPPublicDetector",
        "PrivateKeyDetector",
        # Assignment contexts (``cloudant_password = ...``) rather than formats, and ten
        # times slower than the rest together.
        "CloudantDetector",
        "IbmCloudIamDetector",
        "IbmCosHmacDetector",
        "SoftlayerDetector",
    }
)
_CUT_MARKERS = ("'...", '"...', "...", "\u2026")


def env_secrets(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of the secret-named variables of ``environ`` (``os.environ``)."""
    env = os.environ if environ is None else environ
    return tuple(
        value for name, value in env.items() if len(value) >= MIN_SECRET and is_secret_name(name)
    )


def escape_controls(text: str) -> str:
    """``text`` with every C0 control but newline and tab, DEL and every C1 control
    written as ``\\xNN``."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _spellings(secret: str) -> tuple[str, ...]:
    """The ways a message may spell ``secret``: as is, or escaped by repr or JSON (and,
    once screened, with its control characters escaped)."""
    forms = (secret, repr(secret)[1:-1], json.dumps(secret)[1:-1], escape_controls(secret))
    return tuple(dict.fromkeys(forms))


def _mask_truncated(text: str, secret: str) -> str:
    """Mask a leading part of ``secret`` left where a long value was cut off."""
    if not any(marker in text for marker in _CUT_MARKERS):
        return text
    for size in range(len(secret) - 1, 3, -1):
        head = secret[:size]
        for marker in _CUT_MARKERS:
            if head + marker in text:
                text = text.replace(head + marker, SECRET_MASK + marker)
    return text


def ordered(secrets: Iterable[str]) -> tuple[str, ...]:
    """Distinct non-empty secrets, longest first, so one containing another is masked whole."""
    return tuple(sorted({s for s in secrets if s}, key=len, reverse=True))


def mask(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every spelling of every secret replaced by :data:`SECRET_MASK`."""
    for secret in ordered(secrets):
        for form in _spellings(secret):
            text = text.replace(form, SECRET_MASK)
            text = _mask_truncated(text, form)
    return text


def _detect_secrets_patterns() -> list[re.Pattern[str]]:
    """The compiled regexes of detect-secrets' format detectors; none where it is not
    installed (a base install: the suite's front ends, with the test extra, have it)."""
    try:
        util = importlib.import_module("detect_secrets.core.plugins.util")
        base = importlib.import_module("detect_secrets.plugins.base")
    except ImportError:
        return []
    found: list[re.Pattern[str]] = []
    for detector in util.get_mapping_from_secret_type_to_class().values():
        if not issubclass(detector, base.RegexBasedDetector):
            continue  # entropy and keyword heuristics: not formats
        if detector.__name__ not in _SKIPPED_DETECTORS:
            found += [regex for regex in detector.denylist if isinstance(regex, re.Pattern)]
    return found


@functools.cache
def key_patterns() -> tuple[re.Pattern[str], ...]:
    """Every key format masked, compiled apart (an alternation of them all would lose the
    engine's skip to a literal prefix, and run slower); built on first use."""
    own = [re.compile(pattern) for pattern in OWN_KEY_PATTERNS]
    return (*own, *_detect_secrets_patterns())


def mask_keys(text: str) -> str:
    """``text`` with every credential of a well-known format replaced by
    :data:`SECRET_MASK` (the whole match, so a name around the value may go too)."""
    for pattern in key_patterns():
        text = pattern.sub(SECRET_MASK, text)
    return text


def screen(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` as it may be shown: ``secrets`` and the environment's secret values
    masked, then credentials of well-known formats, then control characters escaped."""
    return escape_controls(mask_keys(mask(text, (*secrets, *env_secrets()))))
