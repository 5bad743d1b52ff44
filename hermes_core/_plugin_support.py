"""Private: the helpers the bundled plugins (``plugins_builtin/``) use and a third party may
not (tests/test_public_api.py enforces both). Cache-file frames, private files and directories,
captured output, process groups, the project gate, skills' variables, execute_code's memory
guard, the progress listener, the address rules of the tools that fetch URLs and a session's
client-side file writes and commands: hermes-core's own rules, shared with the plugins it ships,
not an API that keeps its shape from one release to the next.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core._exports import FACES, face_names, lazy_exports

if TYPE_CHECKING:
    from hermes_core._addresses import (
        AddressRefused as AddressRefused,
    )
    from hermes_core._addresses import (
        AddressSettings as AddressSettings,
    )
    from hermes_core._addresses import (
        allowed_host as allowed_host,
    )
    from hermes_core._addresses import (
        check_url as check_url,
    )
    from hermes_core._addresses import (
        loopback_host as loopback_host,
    )
    from hermes_core._approvals.questions import (
        Question as Question,
    )
    from hermes_core._approvals.questions import (
        questions_of as questions_of,
    )
    from hermes_core._atomic_write import (
        write_atomically as write_atomically,
    )
    from hermes_core._atomic_write import (
        write_bytes_atomically as write_bytes_atomically,
    )
    from hermes_core._cache_files import (
        CACHE_FRAME_SIZE as CACHE_FRAME_SIZE,
    )
    from hermes_core._cache_files import (
        CacheFileError as CacheFileError,
    )
    from hermes_core._cache_files import (
        cache_dir_blocked as cache_dir_blocked,
    )
    from hermes_core._cache_files import (
        cache_frame as cache_frame,
    )
    from hermes_core._cache_files import (
        read_cache_frame as read_cache_frame,
    )
    from hermes_core._captured import (
        head_and_tail as head_and_tail,
    )
    from hermes_core._checked_fetch import (
        CheckedFetcher as CheckedFetcher,
    )
    from hermes_core._checked_fetch import (
        FetchError as FetchError,
    )
    from hermes_core._checked_fetch import (
        read_capped as read_capped,
    )
    from hermes_core._checked_fetch import (
        readers_of as readers_of,
    )
    from hermes_core._client_io import (
        ClientFiles as ClientFiles,
    )
    from hermes_core._client_io import (
        ClientIOError as ClientIOError,
    )
    from hermes_core._client_io import (
        ClientTerminal as ClientTerminal,
    )
    from hermes_core._client_io import (
        TerminalRun as TerminalRun,
    )
    from hermes_core._client_io import (
        attach_client_io as attach_client_io,
    )
    from hermes_core._client_io import (
        client_files as client_files,
    )
    from hermes_core._client_io import (
        client_terminal as client_terminal,
    )
    from hermes_core._config.checks import (
        http_url as http_url,
    )
    from hermes_core._dotenv import (
        secret_variable as secret_variable,
    )
    from hermes_core._encodable import (
        encodable as encodable,
    )
    from hermes_core._execution.memory_guard import (
        hide_host_memory as hide_host_memory,
    )
    from hermes_core._image_providers import (
        image_type as image_type,
    )
    from hermes_core._path_arguments import (
        path_refusal as path_refusal,
    )
    from hermes_core._plugin_settings import (
        moved_settings as moved_settings,
    )
    from hermes_core._plugin_settings import (
        setting_problem as setting_problem,
    )
    from hermes_core._private_files import (
        create_private_file as create_private_file,
    )
    from hermes_core._private_files import (
        make_private_dir as make_private_dir,
    )
    from hermes_core._private_files import (
        private_database as private_database,
    )
    from hermes_core._private_files import (
        private_dir as private_dir,
    )
    from hermes_core._process_groups import (
        end_group as end_group,
    )
    from hermes_core._process_groups import (
        end_group_blocking as end_group_blocking,
    )
    from hermes_core._process_groups import (
        group_alive as group_alive,
    )
    from hermes_core._process_groups import (
        signal_group as signal_group,
    )
    from hermes_core._progress import (
        progress_listener as progress_listener,
    )
    from hermes_core._project_trust import (
        project_refusal as project_refusal,
    )
    from hermes_core._redaction import (
        shown_url as shown_url,
    )
    from hermes_core._redaction import (
        urls_shown_in as urls_shown_in,
    )
    from hermes_core._retry_after import (
        retry_after_seconds as retry_after_seconds,
    )
    from hermes_core._skills.library import (
        scan_skills as scan_skills,
    )
    from hermes_core._skills.variables import (
        releasable_variables as releasable_variables,
    )
    from hermes_core._terminal_cells import (
        joins as joins,
    )
    from hermes_core._terminal_cells import (
        shortened as shortened,
    )
    from hermes_core._tls import (
        tls_context as tls_context,
    )
    from hermes_core._tls import (
        untrusted_certificate as untrusted_certificate,
    )
    from hermes_core._web_search import (
        search_answer as search_answer,
    )
    from hermes_core.agent._transcripts import (
        counts_as_message as counts_as_message,
    )
    from hermes_core.agent._transcripts import (
        transcript_read_lock as transcript_read_lock,
    )

__all__ = face_names("hermes_core._plugin_support")

__getattr__, __dir__ = lazy_exports(__name__, FACES[__name__], __all__, globals())
