"""The C ABI as ctypes sees it (private): callback types, the mirrored struct, and one
table of every function the package calls, `name: (restype, [argtypes])`.

This module imports nothing but ctypes, so tests/bindings/check_bindings.py can hold
it to include/mcpc.h without loading the library. _ffi applies the table.
"""

from __future__ import annotations

from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_bool,
    c_char_p,
    c_double,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_void_p,
)
from typing import Any, Dict, List, Tuple

# ---- callbacks ---------------------------------------------------------------------
# A `const char *` read with a length, and every buffer the callback writes, are
# c_void_p: c_char_p would stop at a NUL or hand over an immutable copy.

FREE_CB = CFUNCTYPE(None, c_void_p)
PROGRESS_CB = CFUNCTYPE(None, c_void_p, c_double, c_double, c_char_p)
CONNECT_DONE_CB = CFUNCTYPE(None, c_void_p, c_int, c_void_p, c_char_p)
LIST_DONE_CB = CFUNCTYPE(None, c_void_p, c_int, c_void_p, c_char_p)
CALL_DONE_CB = CFUNCTYPE(None, c_void_p, c_int, c_void_p, c_char_p)
STDERR_CB = CFUNCTYPE(None, c_void_p, c_void_p, c_size_t)
NOTIFICATION_CB = CFUNCTYPE(None, c_void_p, c_char_p, c_char_p)
LOG_CB = CFUNCTYPE(None, c_void_p, c_char_p, c_char_p, c_char_p)
TOKEN_CB = CFUNCTYPE(c_int32, c_void_p, c_char_p, c_void_p, c_size_t)
SEND_CB = CFUNCTYPE(c_int32, c_void_p, c_void_p, c_size_t)
CLOSE_CB = CFUNCTYPE(None, c_void_p)
REQUEST_CB = CFUNCTYPE(c_int32, c_void_p, c_void_p, c_void_p, c_size_t)
AUTHORIZE_CB = CFUNCTYPE(None, c_void_p, c_void_p)
ASSERTION_CB = CFUNCTYPE(c_int32, c_void_p, c_void_p, c_size_t)
STORE_LOAD_CB = CFUNCTYPE(c_int32, c_void_p, c_char_p, c_void_p, c_size_t)
STORE_SAVE_CB = CFUNCTYPE(None, c_void_p, c_char_p, c_char_p)
SIGN_CB = CFUNCTYPE(c_int32, c_void_p, c_void_p, c_size_t, c_void_p, c_void_p)
TASK_CB = CFUNCTYPE(c_int32, c_void_p, c_char_p, c_char_p, c_char_p)
HOST_EVENT_CB = CFUNCTYPE(None, c_void_p, c_int, c_char_p, c_int, c_char_p)
RESOLVE_CB = CFUNCTYPE(c_int32, c_void_p, c_char_p, c_char_p, c_char_p, c_void_p, c_size_t)
INPUT_CB = CFUNCTYPE(None, c_void_p, c_void_p)


class CallOpts(Structure):
    """mcpc_call_opts_t as this binding knows it: initialised by
    mcpc_call_opts_init_sized with this struct's size, so a library that knows a
    longer struct reads the fields past it as their defaults (see _ffi.new_call_opts())."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("timeout_ms", c_int64),
        ("cancel", c_void_p),
        ("on_progress", PROGRESS_CB),
        ("progress_userdata", c_void_p),
        ("reset_timeout_on_progress", c_bool),
        ("max_total_ms", c_int64),
        ("task_mode", c_int32),
        ("task_timeout_ms", c_int64),
        ("on_task", TASK_CB),
        ("task_userdata", c_void_p),
    ]


# The structs mirrored field by field, by their names in mcpc.h.
STRUCTS: Dict[str, Any] = {"mcpc_call_opts_t": CallOpts}

# ---- functions ----------------------------------------------------------------------

_S = c_int  # mcpc_status_t: a C enum, int-sized
_P = c_void_p  # handles, owned strings, and text read with a length
_PP = POINTER(c_void_p)
_OPTS = POINTER(CallOpts)
_LEN = POINTER(c_size_t)

FUNCTIONS: Dict[str, Tuple[Any, List[Any]]] = {
    # errors and strings
    "mcpc_version": (c_char_p, []),
    "mcpc_status_name": (c_char_p, [c_int32]),
    "mcpc_last_error_message": (c_char_p, []),
    "mcpc_last_error_status": (_S, []),
    "mcpc_last_error_rpc_code": (c_int64, []),
    "mcpc_string_free": (None, [_P]),
    # cancellation and per-call settings
    "mcpc_cancel_new": (_P, []),
    "mcpc_cancel_trigger": (None, [_P]),
    "mcpc_cancel_is_triggered": (c_bool, [_P]),
    "mcpc_cancel_free": (None, [_P]),
    "mcpc_call_opts_init": (None, [_OPTS]),
    "mcpc_call_opts_init_sized": (c_int, [_OPTS, c_size_t]),
    # client settings
    "mcpc_options_new": (_P, []),
    "mcpc_options_free": (None, [_P]),
    "mcpc_options_set_timeout_ms": (_S, [_P, c_int64]),
    "mcpc_options_set_client_info": (_S, [_P, c_char_p, c_char_p]),
    "mcpc_options_set_protocol_version": (_S, [_P, c_char_p]),
    "mcpc_options_set_negotiation": (_S, [_P, c_int32]),
    "mcpc_options_set_max_pages": (_S, [_P, c_size_t]),
    "mcpc_options_set_max_message_size": (_S, [_P, c_size_t]),
    "mcpc_options_set_close_grace_ms": (_S, [_P, c_int64, c_int64]),
    "mcpc_options_set_restart": (_S, [_P, c_uint32, c_int64]),
    "mcpc_options_set_env": (_S, [_P, c_char_p, c_char_p]),
    "mcpc_options_clear_env": (_S, [_P]),
    "mcpc_options_set_cwd": (_S, [_P, c_char_p]),
    "mcpc_options_set_stderr": (_S, [_P, c_int32]),
    "mcpc_options_set_stderr_callback": (_S, [_P, STDERR_CB, _P, FREE_CB]),
    "mcpc_options_set_notification_callback": (_S, [_P, NOTIFICATION_CB, _P, FREE_CB]),
    "mcpc_options_set_log_level": (_S, [_P, c_char_p]),
    "mcpc_options_set_log_callback": (_S, [_P, LOG_CB, _P, FREE_CB]),
    "mcpc_options_set_validate_output": (_S, [_P, c_bool]),
    "mcpc_options_add_header": (_S, [_P, c_char_p, c_char_p]),
    "mcpc_options_add_extension": (_S, [_P, c_char_p, c_char_p]),
    "mcpc_options_set_bearer_token": (_S, [_P, c_char_p]),
    "mcpc_options_set_token_callback": (_S, [_P, TOKEN_CB, _P, FREE_CB]),
    "mcpc_options_add_ca_pem": (_S, [_P, c_char_p, c_size_t]),
    "mcpc_options_add_ca_file": (_S, [_P, c_char_p]),
    "mcpc_options_set_standalone_stream": (_S, [_P, c_bool]),
    "mcpc_options_set_http_transport": (_S, [_P, c_int32]),
    "mcpc_options_set_http_version": (_S, [_P, c_int32]),
    "mcpc_options_set_proxy": (_S, [_P, c_char_p]),
    "mcpc_options_set_no_proxy": (_S, [_P, c_char_p]),
    "mcpc_options_set_proxy_credentials": (_S, [_P, c_char_p, c_char_p]),
    "mcpc_options_set_oauth": (_S, [_P, _P]),
    "mcpc_options_set_elicitation_handler": (_S, [_P, c_uint32, INPUT_CB, _P, FREE_CB]),
    "mcpc_options_set_sampling_handler": (_S, [_P, c_uint32, INPUT_CB, _P, FREE_CB]),
    "mcpc_options_set_roots_handler": (_S, [_P, INPUT_CB, _P, FREE_CB]),
    # connecting
    "mcpc_client_connect_stdio": (_S, [POINTER(c_char_p), c_size_t, _P, _PP]),
    "mcpc_client_connect_http": (_S, [c_char_p, _P, _PP]),
    "mcpc_client_connect_transport": (_S, [_P, _P, _PP]),
    "mcpc_client_connect_stdio_async": (_S, [POINTER(c_char_p), c_size_t, _P, CONNECT_DONE_CB, _P, _PP]),
    "mcpc_client_connect_http_async": (_S, [c_char_p, _P, CONNECT_DONE_CB, _P, _PP]),
    "mcpc_client_connect_transport_async": (_S, [_P, _P, CONNECT_DONE_CB, _P, _PP]),
    "mcpc_client_server_info": (_S, [_P, _PP]),
    "mcpc_client_server_extensions": (_S, [_P, _PP]),
    "mcpc_client_protocol_version": (c_char_p, [_P]),
    "mcpc_client_negotiated_by": (c_char_p, [_P]),
    "mcpc_client_close": (_S, [_P]),
    "mcpc_client_free": (None, [_P]),
    # calls
    "mcpc_client_list_tools": (_S, [_P, _OPTS, _PP]),
    "mcpc_client_list_tools_async": (_S, [_P, _OPTS, LIST_DONE_CB, _P, _PP]),
    "mcpc_client_call_tool": (_S, [_P, c_char_p, c_char_p, _OPTS, _PP]),
    "mcpc_client_call_tool_async": (_S, [_P, c_char_p, c_char_p, _OPTS, CALL_DONE_CB, _P, _PP]),
    "mcpc_client_set_log_level": (_S, [_P, c_char_p, _OPTS]),
    "mcpc_client_forget_lists": (_S, [_P]),
    "mcpc_client_list_resources": (_S, [_P, _OPTS, _PP]),
    "mcpc_client_list_resource_templates": (_S, [_P, _OPTS, _PP]),
    "mcpc_client_list_prompts": (_S, [_P, _OPTS, _PP]),
    "mcpc_client_read_resource": (_S, [_P, c_char_p, _OPTS, _PP]),
    "mcpc_client_list_skills": (_S, [_P, _OPTS, _PP]),
    "mcpc_client_get_skill": (_S, [_P, c_char_p, _OPTS, _PP]),
    "mcpc_client_read_skill_file": (_S, [_P, c_char_p, _OPTS, _PP]),
    "mcpc_client_read_skill_directory": (_S, [_P, c_char_p, _OPTS, _PP]),
    "mcpc_client_subscribe_resource": (_S, [_P, c_char_p, _OPTS]),
    "mcpc_client_unsubscribe_resource": (_S, [_P, c_char_p, _OPTS]),
    "mcpc_client_get_prompt": (_S, [_P, c_char_p, c_char_p, _OPTS, _PP]),
    "mcpc_client_complete": (_S, [_P, c_int32, c_char_p, c_char_p, c_char_p, c_char_p, _OPTS, _PP]),
    "mcpc_client_request": (_S, [_P, c_char_p, c_char_p, _OPTS, _PP]),
    "mcpc_client_resume_task": (_S, [_P, c_char_p, _OPTS, _PP]),
    "mcpc_client_read_ui_view": (_S, [_P, c_char_p, _OPTS, _PP]),
    "mcpc_client_relay_ui": (_S, [_P, c_char_p, _OPTS, _PP]),
    "mcpc_tool_list_ui_uri": (c_char_p, [_P, c_size_t]),
    "mcpc_tool_list_ui_visibility": (c_uint32, [_P, c_size_t]),
    "mcpc_ui_view_html": (_P, [_P, _LEN]),
    "mcpc_ui_view_csp": (c_char_p, [_P]),
    "mcpc_ui_view_allow": (c_char_p, [_P]),
    "mcpc_ui_view_domain": (c_char_p, [_P]),
    "mcpc_ui_view_prefers_border": (c_int32, [_P]),
    "mcpc_ui_view_meta_json": (c_char_p, [_P]),
    "mcpc_ui_view_free": (None, [_P]),
    "mcpc_client_notify": (_S, [_P, c_char_p, c_char_p]),
    "mcpc_op_cancel": (None, [_P]),
    "mcpc_op_is_finished": (c_bool, [_P]),
    "mcpc_op_free": (None, [_P]),
    # results
    "mcpc_result_json": (c_char_p, [_P]),
    "mcpc_result_structured_json": (c_char_p, [_P]),
    "mcpc_result_text": (_P, [_P, _LEN]),
    "mcpc_result_text_count": (c_size_t, [_P]),
    "mcpc_result_text_at": (_P, [_P, c_size_t, _LEN]),
    "mcpc_result_is_error": (c_bool, [_P]),
    "mcpc_result_free": (None, [_P]),
    "mcpc_contents_count": (c_size_t, [_P]),
    "mcpc_contents_uri": (c_char_p, [_P, c_size_t]),
    "mcpc_contents_mime_type": (c_char_p, [_P, c_size_t]),
    "mcpc_contents_text": (_P, [_P, c_size_t, _LEN]),
    "mcpc_contents_blob": (_P, [_P, c_size_t, _LEN]),
    "mcpc_contents_meta_json": (c_char_p, [_P, c_size_t]),
    "mcpc_contents_json": (c_char_p, [_P]),
    "mcpc_contents_free": (None, [_P]),
    "mcpc_tool_list_count": (c_size_t, [_P]),
    "mcpc_tool_list_len": (c_size_t, [_P]),
    "mcpc_tool_list_name": (c_char_p, [_P, c_size_t]),
    "mcpc_tool_list_json": (c_char_p, [_P, c_size_t]),
    "mcpc_tool_list_to_json": (_S, [_P, _PP]),
    "mcpc_tool_list_free": (None, [_P]),
    # input for the server
    "mcpc_input_kind": (c_int32, [_P]),
    "mcpc_input_method": (c_char_p, [_P]),
    "mcpc_input_server": (c_char_p, [_P]),
    "mcpc_input_host_server": (c_char_p, [_P]),
    "mcpc_input_params_json": (c_char_p, [_P]),
    "mcpc_input_message": (c_char_p, [_P]),
    "mcpc_input_schema_json": (c_char_p, [_P]),
    "mcpc_input_url": (c_char_p, [_P]),
    "mcpc_input_elicit": (_S, [_P, c_int32, c_char_p]),
    "mcpc_input_complete": (_S, [_P, c_char_p]),
    "mcpc_input_fail": (_S, [_P, c_char_p]),
    "mcpc_input_free": (None, [_P]),
    "mcpc_client_roots_changed": (_S, [_P]),
    # the transport seam
    "mcpc_transport_new": (_S, [SEND_CB, CLOSE_CB, _P, FREE_CB, _PP]),
    "mcpc_transport_new_request": (_S, [REQUEST_CB, CLOSE_CB, _P, FREE_CB, _PP]),
    "mcpc_transport_deliver": (_S, [_P, c_char_p, c_size_t]),
    "mcpc_transport_end": (_S, [_P, c_char_p]),
    "mcpc_transport_free": (None, [_P]),
    "mcpc_exchange_expects_response": (c_bool, [_P]),
    "mcpc_exchange_complete": (_S, [_P, c_char_p, c_size_t]),
    "mcpc_exchange_fail": (None, [_P, c_char_p]),
    # OAuth
    "mcpc_oauth_new": (_P, []),
    "mcpc_oauth_free": (None, [_P]),
    "mcpc_oauth_set_client": (_S, [_P, c_char_p, c_char_p]),
    "mcpc_oauth_set_redirect_uri": (_S, [_P, c_char_p]),
    "mcpc_oauth_set_client_metadata_url": (_S, [_P, c_char_p]),
    "mcpc_oauth_set_scope": (_S, [_P, c_char_p]),
    "mcpc_oauth_set_grant": (_S, [_P, c_int32]),
    "mcpc_oauth_set_headless": (_S, [_P, c_int32]),
    "mcpc_oauth_set_client_key": (_S, [_P, c_char_p]),
    "mcpc_oauth_set_assertion": (_S, [_P, c_char_p]),
    "mcpc_oauth_set_assertion_callback": (_S, [_P, ASSERTION_CB, _P, FREE_CB]),
    "mcpc_oauth_set_identity_provider": (_S, [_P, c_char_p, c_char_p]),
    "mcpc_oauth_set_dpop": (_S, [_P, c_int32]),
    "mcpc_oauth_set_dpop_key": (_S, [_P, c_char_p]),
    "mcpc_oauth_set_dpop_signer": (_S, [_P, c_char_p, SIGN_CB, _P, FREE_CB]),
    "mcpc_oauth_set_client_signer": (_S, [_P, c_char_p, SIGN_CB, _P, FREE_CB]),
    "mcpc_oauth_set_authorize_callback": (_S, [_P, AUTHORIZE_CB, _P, FREE_CB]),
    "mcpc_oauth_set_store": (_S, [_P, STORE_LOAD_CB, STORE_SAVE_CB, _P, FREE_CB]),
    "mcpc_auth_request_url": (c_char_p, [_P]),
    "mcpc_auth_request_complete": (_S, [_P, c_char_p]),
    "mcpc_auth_request_cancel": (_S, [_P]),
    # hosts
    "mcpc_host_new": (_S, [_P, _PP]),
    "mcpc_host_set_event_callback": (_S, [_P, HOST_EVENT_CB, _P, FREE_CB]),
    "mcpc_host_set_resolver": (_S, [_P, RESOLVE_CB, _P, FREE_CB]),
    "mcpc_host_set_variable": (_S, [_P, c_char_p, c_char_p]),
    "mcpc_host_set_env_policy": (_S, [_P, c_int32, POINTER(c_char_p), c_size_t]),
    "mcpc_host_set_concurrency": (_S, [_P, c_size_t]),
    "mcpc_host_add_config": (_S, [_P, c_char_p, _LEN]),
    "mcpc_host_load_catalog": (_S, [_P, c_char_p, _LEN]),
    "mcpc_host_set_lazy": (_S, [_P, c_int32]),
    "mcpc_host_close": (_S, [_P]),
    "mcpc_host_add_stdio": (_S, [_P, c_char_p, POINTER(c_char_p), c_size_t, _P]),
    "mcpc_host_add_http": (_S, [_P, c_char_p, c_char_p, _P]),
    "mcpc_host_start": (_S, [_P]),
    "mcpc_host_tools": (_S, [_P, _PP]),
    "mcpc_host_status": (_S, [_P, _PP]),
    "mcpc_host_call_tool": (_S, [_P, c_char_p, c_char_p, _OPTS, _PP]),
    "mcpc_host_set_name_format": (_S, [_P, c_char_p]),
    "mcpc_host_resources": (_S, [_P, _PP]),
    "mcpc_host_read_resource": (_S, [_P, c_char_p, _OPTS, _PP]),
    "mcpc_host_prompts": (_S, [_P, _PP]),
    "mcpc_host_get_prompt": (_S, [_P, c_char_p, c_char_p, _OPTS, _PP]),
    "mcpc_host_remove": (_S, [_P, c_char_p]),
    "mcpc_host_free": (None, [_P]),
}

# Functions an older library may lack: the package then goes without what they give.
OPTIONAL = frozenset({"mcpc_options_set_negotiation", "mcpc_client_negotiated_by"})
