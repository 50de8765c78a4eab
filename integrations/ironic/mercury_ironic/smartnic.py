"""SmartNIC (card) hops: OVS representor ports on a SmartNIC or DPU.

A SmartNIC port in Ironic has a ``local_link_connection`` naming the card by
``hostname`` and the representor by ``port_id`` (the Smart NIC networking
spec), and ``is_smartnic`` set. Mercury knows the card as an ``ovs``-platform
device (its name or an alias is the hostname) and plugs the representor into
the card's bridge with the VIF, MAC and node ids as ``external_ids``.

The DPU path (docs/ironic.md, "SmartNIC and DPU ports"): a card whose
Mercury configuration names its ``uplink`` (the switch port it is cabled to)
is programmed in two hops by the same ``plug_port`` / ``unplug_port``
request: Mercury puts the VLAN on the switch port facing the card, then plugs
the representor (and on unplug takes the representor off, then the VLAN off
the uplink unless another representor on the card still uses it). Ironic
models such a card as a *child node* of the server (``parent_node``), with its
own port whose ``local_link_connection`` names that switch port; the
server's SmartNIC ports name the card by ``hostname``. Mercury's
configuration is what the switch hop uses (a caller never steers it to
another switch port); the child node's link is checked against it at
``validate`` (:func:`dpu_child`, :func:`cabled_links`).

This module only builds and checks the *card hop* of a port: which ports are
SmartNIC ports, their card link, the DPU child node a link names, and the
Mercury requests that plug, unplug and validate them. It holds no Ironic
lifecycle logic.
"""

from ironic.common import exception
from ironic import objects

#: The keys of a card link.
CARD_KEYS = ('hostname', 'port_id')

#: The keys that make a link a switch link.
SWITCH_KEYS = ('switch_id', 'switch_info')


def is_smartnic(port):
    """True for a SmartNIC port: ``is_smartnic`` set, or (ports of older API
    versions) a link with ``hostname`` and ``port_id`` and no switch."""
    flag = getattr(port, 'is_smartnic', None)
    if flag:
        return True
    link = port.local_link_connection or {}
    return bool(link.get('hostname') and link.get('port_id')
                and not any(link.get(k) for k in SWITCH_KEYS))


def card_link(port):
    """The card hop of a port: ``{'hostname': ..., 'port_id': ...}``, or
    None when the link does not name both."""
    link = port.local_link_connection or {}
    if not all(link.get(k) for k in CARD_KEYS):
        return None
    return {k: link[k] for k in CARD_KEYS}


def card_name(link):
    """The card's name for messages and grouping."""
    return link['hostname']


def plug_request(base, link, port, vif_id, vlan=None, network=None):
    """A Mercury ``plug_port`` for the representor ``link['port_id']`` on the
    card ``link['hostname']``: ``iface-id`` is ``vif_id``, ``attached-mac``
    the port's MAC, ``node-uuid`` the node (in ``base``); tagged with
    ``vlan`` (or the VLAN of the configured ``network`` name) when given.

    :param base: the request's common fields (reason, node_uuid, lifecycle,
        request_id), as ``network.MercuryNetwork._base_request`` makes them.
    """
    req = dict(base)
    req.update({'op': 'plug_port',
                'local_link_connection': {'hostname': link['hostname']},
                'port': link['port_id'],
                'vif_id': vif_id,
                'port_uuid': port.uuid})
    if port.address:
        req['mac'] = port.address
    if vlan is not None:
        req['vlan'] = vlan
    elif network:
        req['network'] = network
    return req


def unplug_request(base, link, port):
    """A Mercury ``unplug_port`` for the representor (only a port Mercury
    plugged is removed: OVS ownership policy)."""
    req = dict(base)
    req.update({'op': 'unplug_port',
                'local_link_connection': {'hostname': link['hostname']},
                'port': link['port_id'],
                'port_uuid': port.uuid})
    return req


def validity_request(link):
    """A Mercury ``is_link_valid`` for the card link (no device contact)."""
    return {'op': 'is_link_valid', 'local_link_connection': dict(link)}


def validity_request_switch(link):
    """A Mercury ``is_link_valid`` for a switch link (switch_id or
    switch_info, and port_id): Mercury answers the device and the canonical
    port name it resolves to."""
    return {'op': 'is_link_valid',
            'local_link_connection': {k: link[k] for k in
                                      ('switch_id', 'switch_info', 'port_id')
                                      if link.get(k)}}


def dpu_child(task, hostname):
    """The child node of ``task.node`` that a card link's ``hostname``
    names — a node whose ``parent_node`` is this node and whose name or UUID
    is the hostname (Ironic's model of a DPU inside a server) — or None when
    the hostname names the card directly (a server behind a card it does not
    hold as a child, e.g. a multi-host card)."""
    if not hostname:
        return None
    children = objects.Node.list(task.context,
                                 filters={'parent_node': task.node.uuid})
    for child in children:
        if hostname in (child.name, child.uuid):
            return child
    return None


def cabled_links(task, child):
    """Where Ironic says a DPU child node is cabled: the switch links
    (switch_id or switch_info, and port_id) of its own ports."""
    out = []
    for port in objects.Port.list_by_node_id(task.context, child.id):
        link = port.local_link_connection or {}
        if link.get('port_id') and (link.get('switch_id')
                                    or link.get('switch_info')):
            out.append(dict(link))
    return out


def is_dpu_of_parent(task):
    """True when ``task.node`` is a DPU child node: it has a ``parent_node``
    whose SmartNIC ports name it (by name or UUID) as their card. Its own
    ports are then the card's uplink, which Mercury programs through the
    parent's requests, never through the child's own steps."""
    parent_ident = getattr(task.node, 'parent_node', None)
    if not parent_ident:
        return False
    try:
        parent = objects.Node.get(task.context, parent_ident)
    except (exception.NodeNotFound, exception.InvalidIdentity):
        return False  # a parent that is gone: not a DPU of anything known
    names = {task.node.uuid} | ({task.node.name} if task.node.name else set())
    for port in objects.Port.list_by_node_id(task.context, parent.id):
        link = card_link(port) if is_smartnic(port) else None
        if link and link['hostname'] in names:
            return True
    return False
