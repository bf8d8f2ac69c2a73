"""One rule for which environment variable names hold secrets.

A host gives a CLI its environment (``CLIConfig.env``), ``adaptertest record`` redacts
recordings, and the suite masks reports: all three must agree on what a secret is, so
they share this rule.
"""

from __future__ import annotations

import re

__all__ = ["is_secret_name"]

_SECRET_NAME = re.compile(
    r"(?:^|_)(?:[A-Z0-9]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|COOKIE)S?"
    r"|PAT|PASS|AUTH(?!OR(?!IZ))[A-Z0-9]*)(?:_|$)",
    re.IGNORECASE,
)


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says its value is a secret.

    A ``_``-separated word ending in KEY, TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE,
    CREDENTIAL or COOKIE (plurals too), a word PAT or PASS, or a word starting with AUTH
    (AUTHORIZATION too, not AUTHOR), in any case. ``OPENAI_API_KEY``, ``GH_TOKEN``,
    ``PGPASSWORD``, ``GITHUB_PAT`` and ``AUTH_HEADER`` are secret names;
    ``TOKENIZERS_PARALLELISM``, ``PATH``, ``PWD``, ``KEYBOARD`` and ``GIT_AUTHOR_NAME``
    are not.
    """
    return _SECRET_NAME.search(name) is not None
