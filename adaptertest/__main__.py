"""``python -m adaptertest`` and the ``adaptertest`` console script.

``replay`` is dispatched before anything heavy is imported: it stands in for an agent
CLI and starts once per driver run, so it must start fast. ``record`` needs only the
standard library too, and is dispatched the same way.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs the replay path start-up time; mypy reads this as True
if TYPE_CHECKING:
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``adaptertest`` command; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["replay"]:
        from adaptertest.replay import main as replay_main

        return replay_main(args[1:])
    if args[:1] == ["record"]:
        from adaptertest.record import main as record_main

        return record_main(args[1:])
    if args[:1] == ["install-clis"]:
        from adaptertest.realcli.cli import main as install_clis_main

        return install_clis_main(args[1:])
    # The suite's session-codec properties use hypothesis with their own strategies; in
    # this process, third-party hypothesis plugins (some import pytest) are dead weight.
    os.environ.setdefault("HYPOTHESIS_NO_PLUGINS", "1")
    from adaptertest.cli import main as cli_main

    return cli_main(args)


if __name__ == "__main__":
    sys.exit(main())
