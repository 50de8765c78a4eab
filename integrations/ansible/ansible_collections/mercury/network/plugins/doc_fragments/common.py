# -*- coding: utf-8 -*-
# Copyright: Mercury developers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """Options every mercury.network module takes."""

    DOCUMENTATION = r"""
options:
  device:
    description:
      - The device's name, alias or switch MAC in Mercury's configuration.
      - One of O(device), O(switch_id) or O(switch_info) is needed.
    type: str
  switch_id:
    description:
      - Ironic C(local_link_connection) C(switch_id) (the switch's LLDP chassis MAC).
    type: str
  switch_info:
    description:
      - Ironic C(local_link_connection) C(switch_info) (a device name).
    type: str
  request_id:
    description:
      - Correlation id recorded in Mercury's result and audit log (generated when absent).
    type: str
  mercury:
    description:
      - The mercury program to run (a name on C(PATH), or a path), when O(executor) is not set.
    type: str
    default: mercury
  config:
    description:
      - Mercury's configuration file (C(--config)); default C(MERCURY_CONFIG) or
        C(/etc/mercury/mercury.toml). Not used with O(executor).
    type: path
  executor:
    description:
      - Run Mercury on this host over SSH (V([user@]host)) instead of locally. The key may be
        a Mercury forced command (C(serve-ssh)); the request is sent as JSON on stdin to C(run).
    type: str
  ssh:
    description:
      - The SSH client command line used with O(executor).
    type: list
    elements: str
    default: [ssh, -o, BatchMode=yes]
notes:
  - Check mode asks Mercury for C(--check) (read the device, predict C(changed) and the diff,
    send no configuration line). A Mercury without C(--check) makes the module fall back to
    C(--dry-run), and C(changed) is then predicted from the lines that would be sent, without
    reading the device, and a warning says so.
  - Diff mode returns Mercury's before/after of every port it read back (changing modules with their verify option).
"""

    CHANGE = r"""
options:
  reason:
    description:
      - Why (change ticket, "deploy node <uuid>"), recorded in Mercury's audit log.
    type: str
    default: ansible
  node_uuid:
    description:
      - Ironic node UUID, for the audit record.
    type: str
  port_uuid:
    description:
      - Ironic port UUID, for the audit record.
    type: str
  lifecycle:
    description:
      - Ironic lifecycle step (idle, inspection, cleaning, provisioning, tenant, rescuing, servicing).
    type: str
  verify:
    description:
      - Read the ports back before and after the change (Mercury's C(--verify)); nothing is
        sent when they already are as requested, so C(changed) is exact and a second run
        reports C(changed=false).
    type: bool
    default: true
"""
