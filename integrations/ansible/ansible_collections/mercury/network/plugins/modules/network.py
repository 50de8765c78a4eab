#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: Mercury developers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: network
short_description: Create or delete a VLAN on a switch
description:
  - O(state=present) is Mercury's C(add_network), O(state=absent) C(delete_network). The
    device needs C(manage_vlans = true) in Mercury's configuration; its idle VLAN can never
    be deleted.
  - Mercury cannot read a VLAN back yet, so O(verify) has no effect here and C(changed) is
    true whenever Mercury sent the lines (creating an existing VLAN is harmless on every
    supported platform, but is reported as a change).
version_added: "0.1.0"
author: Mercury developers (@mercury-dev)
extends_documentation_fragment:
  - mercury.network.common
  - mercury.network.common.change
options:
  vlan:
    description:
      - The VLAN id.
    type: int
    required: true
  name:
    description:
      - The VLAN's name (default V(vlan<N>)).
    type: str
  state:
    description:
      - Whether the VLAN should exist.
    type: str
    choices: [present, absent]
    default: present
"""

EXAMPLES = r"""
- name: The tenant VLAN
  mercury.network.network:
    device: leaf-1
    vlan: 120
    name: tenant-a
    reason: CHG-5
"""

RETURN = r"""
changed:
  description: Whether the device's configuration changed (exact with O(verify)).
  returned: always
  type: bool
msg:
  description: What Mercury did, in one sentence (the device's own error line on failure).
  returned: always
  type: str
rc:
  description: Mercury's exit code (0 done, 1 rejected by the device, 64-78 see mercury(1)).
  returned: always
  type: int
commands:
  description: The lines sent.
  returned: always
  type: list
  elements: str
mercury:
  description: Mercury's whole JSON result.
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.mercury.network.plugins.module_utils.mercury import (
    COMMON_ARGS,
    meta,
    run,
    target,
)


def main():
    spec = dict(COMMON_ARGS)
    spec.update(
        vlan=dict(type="int", required=True),
        name=dict(type="str"),
        state=dict(type="str", choices=["present", "absent"], default="present"),
    )
    module = AnsibleModule(
        argument_spec=spec,
        supports_check_mode=True,
        required_one_of=[("device", "switch_id", "switch_info")],
    )
    p = module.params
    request = dict(op="add_network" if p["state"] == "present" else "delete_network", vlan=p["vlan"])
    if p.get("name"):
        request["name"] = p["name"]
    run(module, meta(p, target(p, request)), reads_back=False)


if __name__ == "__main__":
    main()
