# -*- coding: utf-8 -*-
# Copyright: Mercury developers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Shared code of the mercury.network modules: build one Mercury request, run it (the
local ``mercury`` binary, or ``ssh EXECUTOR`` to a host whose key may be a Mercury forced
command), and turn Mercury's JSON result into Ansible's return values.

Mercury's result already carries Ansible's keys (``changed``, ``failed``, ``msg``, ``rc``,
``warnings``, ``diff``); this module passes them through and keeps the whole result under
``mercury``.

Check mode: Mercury's ``--check`` (connect, read, report the diff and the ``changed`` it
would produce, send no configuration line) is asked for first. A Mercury without
``--check`` answers it with a usage error (rc 64); the module then falls back to
``--dry-run`` (offline: the lines that would be sent), reports ``changed`` as true whenever
a line would be sent, and says in a warning that ``changed`` is a prediction without a
read of the device.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import shlex

COMMON_ARGS = dict(
    device=dict(type="str"),
    switch_id=dict(type="str"),
    switch_info=dict(type="str"),
    reason=dict(type="str", default="ansible"),
    request_id=dict(type="str"),
    node_uuid=dict(type="str"),
    port_uuid=dict(type="str"),
    lifecycle=dict(type="str"),
    verify=dict(type="bool", default=True),
    mercury=dict(type="str", default="mercury"),
    config=dict(type="path"),
    executor=dict(type="str"),
    ssh=dict(type="list", elements="str", default=["ssh", "-o", "BatchMode=yes"]),
)

READ_ARGS = dict(
    (k, v)
    for k, v in COMMON_ARGS.items()
    if k not in ("reason", "node_uuid", "port_uuid", "lifecycle", "verify")
)


def target(params, request):
    """Adds the device reference (name, or Ironic's switch_id / switch_info) to request."""
    if params.get("device"):
        request["device"] = params["device"]
    link = dict(
        (k, params[k]) for k in ("switch_id", "switch_info") if params.get(k)
    )
    if link:
        request["local_link_connection"] = link
    return request


def meta(params, request):
    """Adds the reason and the correlation ids."""
    for k in ("reason", "request_id", "node_uuid", "port_uuid", "lifecycle"):
        if params.get(k) is not None:
            request[k] = params[k]
    return request


def _argv(params, flags):
    """The command line, and whether it runs over SSH."""
    if params.get("executor"):
        # The remote side is a forced command (serve-ssh) or a login shell: one quoted
        # string either way, never a --config (a forced command refuses it).
        remote = ["mercury"] + flags + ["run"]
        return list(params["ssh"]) + [params["executor"], " ".join(shlex.quote(w) for w in remote)]
    argv = [params["mercury"]]
    if params.get("config"):
        argv += ["--config", params["config"]]
    return argv + flags + ["run"]


def call(module, request, flags):
    """Runs one request; returns Mercury's parsed result (or fails the module when no
    result came back)."""
    argv = _argv(module.params, ["--format", "json"] + flags)
    rc, out, err = module.run_command(argv, data=json.dumps(request), binary_data=True)
    try:
        result = json.loads(out)
    except ValueError:
        module.fail_json(
            msg="mercury printed no JSON result (is it installed there?): %s" % (err or out).strip()[:2000],
            rc=rc,
            cmd=argv,
        )
    if not isinstance(result, dict):
        module.fail_json(msg="mercury's result is not a JSON object", rc=rc)
    return result


def _text(state):
    """A port state (dict) as stable `key: value` lines for Ansible's diff output."""
    if not isinstance(state, dict):
        return "" if state is None else "%s\n" % state
    return "".join("%s: %s\n" % (k, json.dumps(state[k])) for k in sorted(state))


def ansible_diff(result):
    """Mercury's diff list as Ansible diff dicts with text before/after."""
    out = []
    for d in result.get("diff") or []:
        out.append(
            dict(
                before_header=d.get("before_header", ""),
                after_header=d.get("after_header", ""),
                before=_text(d.get("before")),
                after=_text(d.get("after")),
            )
        )
    return out


def run(module, request, mutates=True, reads_back=True):
    """Runs `request` the way the task asks (check mode, diff mode, verify) and exits the
    module with Ansible's return values. `reads_back`: Mercury can read the request's
    result back (port, LAG and OVS operations; not VLAN creation)."""
    params = module.params
    flags = []
    warnings = []
    if mutates and reads_back and params.get("verify", True):
        request["verify"] = True
    if mutates and module.check_mode:
        result = call(module, request, ["--check"])
        if result.get("rc") == 64 and "--check" in (result.get("msg") or ""):
            result = call(module, request, ["--dry-run"])
            if result.get("ok"):
                result["changed"] = bool(result.get("commands"))
                warnings.append(
                    "this Mercury has no --check: changed is predicted from a dry run "
                    "(lines it would send) without reading the device"
                )
    else:
        result = call(module, request, flags)
    ret = dict(
        changed=bool(result.get("changed")),
        msg=result.get("msg", ""),
        rc=result.get("rc", 70),
        mercury=result,
        commands=[c.get("input") for c in result.get("commands") or []],
    )
    if module._diff and result.get("diff"):
        ret["diff"] = ansible_diff(result)
    for w in list(result.get("warnings") or []) + warnings:
        module.warn(w)
    if result.get("failed", True) or result.get("rc", 70) != 0:
        module.fail_json(**ret)
    module.exit_json(**ret)
