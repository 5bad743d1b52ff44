"""The test kit for plugin authors, registered as a pytest plugin (entry point ``pytest11``).

Fixtures (all build real files in ``tmp_path``):

- ``hermes_home``: a temporary, empty ``HERMES_HOME``;
- ``hermes_project``: a temporary working directory (the project);
- ``hermes_env``: an :class:`~hermes_core.Environment` over those two, with an empty
  temporary bundled-plugins directory and strict plugin loading;
- ``hermes_dir_plugin``: writes a directory plugin (``plugin.yaml`` and ``__init__.py``);
- ``hermes_distribution``: writes an installed distribution (a real ``*.dist-info``) into a
  temporary ``site-packages`` that is put on ``sys.path``;
- ``hermes_nix_store``: writes a :class:`FakeNixStore`, a store path laid out like Nix's;
- ``hermes_cli``: a :class:`HermesCli` that runs the real ``hermes`` command as a subprocess in
  that home and project;
- ``hermes_host``: starts a :class:`~hermes_core.Host` in that environment with plugin
  objects given to :meth:`~hermes_core.Host.register` (see :func:`make_host`).

Conformance suites, run by a plugin author against their own plugin, one test per rule:
:func:`search_backend_conformance` (a ``SearchBackend``), :func:`connector_gateway_conformance`
(a ``ConnectorGateway`` over the account of :data:`GATEWAY_FIXTURES`),
:func:`approval_policy_conformance` (an ``ApprovalPolicy``) and
:func:`model_provider_conformance` (a ``ModelProvider``, against a :class:`FakeModelServer`).

:class:`FakeModelServer` is a scripted stand-in for a model's API (no model runs in CI): a real
HTTP server speaking the OpenAI and Anthropic wire formats, answering :class:`FakeTurn` s and
recording every request (:class:`RecordedRequest`).

:class:`DevGateway` is the reference connector gateway (``hermes connectors dev-gateway``): a
real HTTP server serving the gateway protocol from a fixture file (:func:`load_fixtures`).

The plain functions (:func:`write_dir_plugin`, :func:`write_distribution`, :func:`make_host`,
:func:`make_search_backend`, :func:`make_model_provider`) work outside pytest too, e.g. in
a benchmark. Names are loaded on first use: the reference gateway does not import pytest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core._exports import FACES, face_names, lazy_exports

if TYPE_CHECKING:
    from hermes_core.testing._backend_conformance import (
        SEARCH_BACKEND_RULES as SEARCH_BACKEND_RULES,
    )
    from hermes_core.testing._backend_conformance import (
        search_backend_conformance as search_backend_conformance,
    )
    from hermes_core.testing._cli import HermesCli as HermesCli
    from hermes_core.testing._devgateway import DevGateway as DevGateway
    from hermes_core.testing._fake_model import (
        FakeModelServer as FakeModelServer,
    )
    from hermes_core.testing._fake_model_wire import (
        FakeToolCall as FakeToolCall,
    )
    from hermes_core.testing._fake_model_wire import (
        FakeTurn as FakeTurn,
    )
    from hermes_core.testing._fake_provider import (
        FakeModelProvider as FakeModelProvider,
    )
    from hermes_core.testing._fake_provider import (
        fake_turn as fake_turn,
    )
    from hermes_core.testing._fake_requests import (
        RecordedRequest as RecordedRequest,
    )
    from hermes_core.testing._files import (
        PLUGIN_SOURCE as PLUGIN_SOURCE,
    )
    from hermes_core.testing._files import (
        FakeNixStore as FakeNixStore,
    )
    from hermes_core.testing._files import (
        InstalledDistribution as InstalledDistribution,
    )
    from hermes_core.testing._files import (
        forget_modules_under as forget_modules_under,
    )
    from hermes_core.testing._files import (
        make_nix_store as make_nix_store,
    )
    from hermes_core.testing._files import (
        write_dir_plugin as write_dir_plugin,
    )
    from hermes_core.testing._files import (
        write_distribution as write_distribution,
    )
    from hermes_core.testing._fixtures import (
        hermes_cli as hermes_cli,
    )
    from hermes_core.testing._fixtures import (
        hermes_dir_plugin as hermes_dir_plugin,
    )
    from hermes_core.testing._fixtures import (
        hermes_distribution as hermes_distribution,
    )
    from hermes_core.testing._fixtures import (
        hermes_env as hermes_env,
    )
    from hermes_core.testing._fixtures import (
        hermes_home as hermes_home,
    )
    from hermes_core.testing._fixtures import (
        hermes_host as hermes_host,
    )
    from hermes_core.testing._fixtures import (
        hermes_nix_store as hermes_nix_store,
    )
    from hermes_core.testing._fixtures import (
        hermes_project as hermes_project,
    )
    from hermes_core.testing._gateway_conformance import (
        GATEWAY_FIXTURES as GATEWAY_FIXTURES,
    )
    from hermes_core.testing._gateway_conformance import (
        GATEWAY_RULES as GATEWAY_RULES,
    )
    from hermes_core.testing._gateway_conformance import (
        connector_gateway_conformance as connector_gateway_conformance,
    )
    from hermes_core.testing._gateway_fixtures import (
        Fixtures as Fixtures,
    )
    from hermes_core.testing._gateway_fixtures import (
        load_fixtures as load_fixtures,
    )
    from hermes_core.testing._gateway_fixtures import (
        parse_fixtures as parse_fixtures,
    )
    from hermes_core.testing._hosts import (
        make_approval_policy as make_approval_policy,
    )
    from hermes_core.testing._hosts import (
        make_connector_gateway as make_connector_gateway,
    )
    from hermes_core.testing._hosts import (
        make_host as make_host,
    )
    from hermes_core.testing._hosts import (
        make_model_provider as make_model_provider,
    )
    from hermes_core.testing._hosts import (
        make_search_backend as make_search_backend,
    )
    from hermes_core.testing._hosts import (
        search_backend_module as search_backend_module,
    )
    from hermes_core.testing._memory_conformance import (
        MEMORY_PROVIDER_RULES as MEMORY_PROVIDER_RULES,
    )
    from hermes_core.testing._memory_conformance import (
        memory_provider_conformance as memory_provider_conformance,
    )
    from hermes_core.testing._policy_conformance import (
        POLICY_RULES as POLICY_RULES,
    )
    from hermes_core.testing._policy_conformance import (
        approval_policy_conformance as approval_policy_conformance,
    )
    from hermes_core.testing._provider_conformance import (
        MODEL_PROVIDER_RULES as MODEL_PROVIDER_RULES,
    )
    from hermes_core.testing._provider_conformance import (
        model_provider_conformance as model_provider_conformance,
    )

__all__ = face_names(__name__)

__getattr__, __dir__ = lazy_exports(__name__, FACES[__name__], __all__, globals())
