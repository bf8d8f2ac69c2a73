"""How this driver is checked: the suite options its authors run it with.

``python -m adaptertest check referencedriver:new_reference_driver`` picks these up
(a module-level ``adaptertest_options`` next to the factory), and so can a pytest file.
A real driver keeps the same function, naming its own config, session keys and
guard keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from driver.run import SessionState
from referencedriver._config import DEFAULT_MODEL, ReferenceConfig
from referencedriver._driver import ReferenceDriver

if TYPE_CHECKING:
    from adaptertest.options import ModelBinding, ModelEndpoint, Options


def adaptertest_options() -> Options:
    """Every opt-in clause turned on; live probes stay off until asked for (``--live``).

    Safe to copy into a driver that calls a real CLI: nothing here runs the provider.
    ``concurrent_runs`` and ``live_structured_output`` only take effect with
    ``live_run=True``, and then cost two concurrent runs and one structured run on top of
    the live run.
    """
    from adaptertest.options import Options

    return Options(
        config=ReferenceConfig(),
        session_state=SessionState(
            resume_id="reference-session-1",
            data={"cwd": "workspace-a", "workspace_id": "ws-1"},
        ),
        session_keys=("cwd", "workspace_id"),
        guard_keys=("cwd", "workspace_id"),
        expected_detected_model=DEFAULT_MODEL,
        required_config_fields=("model", "cwd"),
        expect_reject_foreign_config=True,
        sync_skills_probe=True,
        live_structured_output=True,
        concurrent_runs=2,
    )


def driver_for_endpoint(endpoint: ModelEndpoint) -> ReferenceDriver:
    """The driver in its network mode, pointed at a model endpoint the suite runs: its
    deadline, its home for sessions and its environment for every tool command."""
    return ReferenceDriver(
        ReferenceConfig(
            model_url=endpoint.base_url,
            api_key=endpoint.api_key,
            home=str(endpoint.home),
            env=dict(endpoint.env),
            timeout=endpoint.deadline,
        )
    )


def model_binding() -> ModelBinding:
    """How the suite binds this driver to its model emulator (the scenario clauses):
    ``Options(model_binding=model_binding())``. The network mode speaks Anthropic
    Messages; ``ref`` lets a new interpreter rebuild the binding (RES-02)."""
    from adaptertest.options import ModelBinding

    return ModelBinding(
        driver=driver_for_endpoint,
        protocol="anthropic",
        ref=f"{__name__}:model_binding",
    )
