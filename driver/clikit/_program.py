"""What every driver of one configured program shares, whatever the program prints.

:class:`ProgramDriver` holds the frozen config and answers the config, probe, session
and environment methods the same way for the JSONL CLI drivers
(:class:`~driver.clikit.CLIDriver`) and the ACP drivers (``driver.acpkit``).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar, Generic, TypeVar

from driver import (
    ConfigSchema,
    Descriptor,
    EnvironmentReport,
    InvalidDriverConfigError,
    StreamCapability,
    canonical_session_config_fingerprint,
)
from driver.clikit._codec import ResumeCodec
from driver.clikit._config import CLIConfig, masked_env
from driver.clikit._probes import npm_package_version, program_report

__all__ = ["ProgramDriver"]

ConfigT = TypeVar("ConfigT", bound=CLIConfig)


class ProgramDriver(ABC, Generic[ConfigT]):
    """A driver that runs a configured program; holds only its frozen config, so one
    instance serves concurrent runs (a subclass may add state it guards itself)."""

    driver_type: ClassVar[str]
    """``Descriptor.type``, the codec name and the ``driver_type`` of every report."""
    fingerprint_domain: ClassVar[str]
    """Names the config encoding and the codec contract."""
    install_hint: ClassVar[str]
    """What the environment report suggests when the program is missing."""
    capability: ClassVar[StreamCapability]
    """What :meth:`stream_capability` declares."""
    supported_cli_versions: ClassVar[str] = ""
    """The releases of the program this driver supports, as a range such as
    ``">=2.1.323,<2.2"``; empty means undeclared. The environment report (CAP-03) warns,
    naming both, when the installed release (:meth:`installed_cli_version`) is outside
    it, and ``adaptertest sweep --supported MODULE:CLASS`` marks the releases outside it."""

    def __init__(self, config_type: type[ConfigT], config: ConfigT | None) -> None:
        """``config_type`` is the subclass's config; None means its defaults."""
        self._config_type = config_type
        self._config = config if config is not None else config_type.model_validate({})

    @property
    def config(self) -> ConfigT:
        """The construction config (immutable)."""
        return self._config

    @abstractmethod
    def descriptor(self) -> Descriptor:
        """Declare exactly what the driver delivers; built fresh on every call (DRV-02/03)."""

    # -- config and probes ----------------------------------------------------------------

    def validate_config(self, config: object | None) -> None:
        """Accept None (the captured config is used) or the driver's config type (CFG-01..03)."""
        if config is None or isinstance(config, self._config_type):
            return
        raise InvalidDriverConfigError(
            self.driver_type, TypeError(f"unsupported config type {type(config).__qualname__}")
        )

    def _config_for(self, config: object | None) -> ConfigT:
        """The given config when it is one of ours, else the construction config."""
        self.validate_config(config)
        return config if isinstance(config, self._config_type) else self._config

    async def check_environment(self, config: object | None) -> EnvironmentReport:
        """Report whether the configured program can be found (CAP-03)."""
        program = self._config_for(config).command[0]
        return program_report(
            self.driver_type,
            program,
            self.install_hint,
            supported=self.supported_cli_versions,
            version_of=self.installed_cli_version,
        )

    def installed_cli_version(self, binary: str) -> str | None:
        """The release of the program at ``binary``, for the environment report's
        comparison with :attr:`supported_cli_versions`: by default the version of the npm
        package that provides it (nothing is executed); None when unknown. Override it for
        a program that is not installed with npm."""
        return npm_package_version(binary)

    async def config_schema(self, config: object | None) -> ConfigSchema | None:
        """Return the descriptor's static schema (CAP-08)."""
        self.validate_config(config)
        return self.descriptor().config_schema

    # -- streaming and sessions -----------------------------------------------------------

    def stream_capability(self) -> StreamCapability:
        """Return the class's :attr:`capability` (frozen, so sharing it is safe)."""
        return self.capability

    def session_codec(self) -> ResumeCodec:
        """Return the codec that makes checkpoints resumable (CAP-01)."""
        return ResumeCodec(self.driver_type)

    def session_config_fingerprint(self) -> str:
        """Fingerprint the construction config under the codec's domain (CAP-01).

        Every field counts, but of ``env`` only the names of secret-named variables
        (:func:`driver.is_secret_name`): a rotated API key must not orphan every stored
        session, and the fingerprint, stored with each session, must not carry a
        function of the key. The inherited environment is the host's, not the config's,
        and does not count.
        """
        config = self._config
        if config.env:
            config = config.model_copy(update={"env": masked_env(config.env)})
        return canonical_session_config_fingerprint(self.fingerprint_domain, config)

    # -- the process's environment --------------------------------------------------------

    def home_env(self, home: Path) -> dict[str, str]:
        """The variables that point the program at ``home`` (``CLIConfig.home``).

        Default: ``{"HOME": home}``. A driver whose program reads a variable of its own
        (a config directory) overrides this.
        """
        return {"HOME": str(home)}

    def process_env(self, config: ConfigT) -> dict[str, str]:
        """The environment the program is started with: the inherited one, then
        :meth:`home_env` when ``config.home`` is set, then ``config.env`` (last wins)."""
        env = dict(os.environ)
        if config.home:
            env.update(self.home_env(Path(config.home)))
        env.update(config.env)
        return env
