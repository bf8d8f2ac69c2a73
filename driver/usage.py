"""Token and cost accounting of a run, defined once for every CLI.

Its own module because both the transcript and the response carry it; upstream
keeps it in ``run.go`` (``driver.run`` re-exports it).
"""

from __future__ import annotations

from driver._base import SPIModel

__all__ = ["Usage"]


class Usage(SPIModel):
    """Token and cost accounting of one run, in one meaning for every CLI.

    ``Usage | None`` where it is used: ``None`` means "not observed"; zeros are real.
    CLIs count differently (codex reports input including cached tokens, Claude Code
    reports cache reads and cache writes apart from input), so a driver converts to
    this definition before it reports, and a host may add usages of any drivers:

    - ``input_tokens``: every input token the provider processed for the run,
      cache reads and cache writes included.
    - ``cached_input_tokens``: the part of ``input_tokens`` served from cache
      (cache reads), so never more than ``input_tokens``.
    - ``output_tokens``: every generated token, reasoning tokens included.
    - ``estimated_cost_milli``: the run's cost in thousandths of a US dollar,
      rounded to the nearest (``round(cost_usd * 1000)``); 0 when the CLI reports none.

    No count is negative. When the stream's ``run.finished`` payload carries usage,
    it equals the response's (the USG-01 extension clause checks a live run).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    estimated_cost_milli: int = 0
