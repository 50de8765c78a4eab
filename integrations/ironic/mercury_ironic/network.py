"""The ``mercury`` network interface.

At each lifecycle step the node's switch ports are put on the step's network
by Mercury, on the executor host, over SSH (``mercury_ironic.client``).

Where the VLANs come from is the same as for Ironic's own
``ironic-networking`` interface, so the two are configured alike:

* idle, inspection, cleaning, provisioning, rescuing and servicing networks:
  the node's ``driver_info['<type>_network']``, else
  ``[ironic_networking]<type>_network``
  (``{access|trunk|hybrid}/native_vlan=N[/allowed_vlans=a,b-c]``), else the
  port's ``extra['switchport']``;
* the tenant network: a VIF attached to the port (or port group) whose id
  names a VLAN (``vlan-120`` or ``120``, the Mercury proposal's flow) or a
  network of Mercury's config (``[networks.tenant-a] vlan = 120``: the VIF id
  ``tenant-a`` is sent as ``network`` and Mercury resolves it), else the
  port's ``extra['switchport']``;
* LAGs: a port group with ``extra['lag']`` (``mode``, ``aggregation_mode``,
  ``native_vlan``, ``allowed_vlans``), or with a VIF attached, whose member
  ports share one switch becomes a Mercury ``update_lag`` at the tenant step
  and ``delete_lag`` when the tenant network is removed;
* SmartNIC ports (``is_smartnic``, a link with ``hostname`` + ``port_id``):
  the representor is plugged on the card (Mercury's ``ovs`` platform) with
  the VIF, MAC and node ids at each configure step, tagged with the step's
  VLAN, and unplugged when the step's network is removed
  (``mercury_ironic.smartnic`` builds those requests).

``port_changed`` / ``portgroup_changed`` compare what the port was with what
it is (the link, and the network the current step gives it) and only touch a
switch when that differs, as ``ironic-networking`` does.

Requests for one node's ports on the same switch go in one Mercury request
(one device session). Every request carries a reason, the node and port
UUIDs, the lifecycle step and the conductor's request id, for Mercury's
audit log. Failures raise ``InvalidParameterValue`` (Mercury exit 64, 65,
77: bad data or policy) or ``NetworkError`` (anything else) with Mercury's
message; a failed configure step first returns the node's ports to idle.
"""

import collections
import dataclasses
import re
from typing import Optional

import jsonschema
from oslo_config import cfg
from oslo_log import log

from ironic.common import exception
from ironic.common import network as ironic_network
from ironic.common import states
from ironic.drivers import base
from ironic.drivers.modules.network import ironic_networking_schemas as schemas
from ironic.drivers.modules.network.switchport_config import SwitchPortConfig

from mercury_ironic import client as mercury_client
from mercury_ironic import smartnic

LOG = log.getLogger(__name__)
CONF = cfg.CONF

#: Where a VIF is recorded on a port, as Ironic's other interfaces do.
VIF_KEY = 'tenant_vif_port_id'

#: VIF ids that name a VLAN: ``vlan-120``, ``vlan120``, ``120``.
VLAN_VIF = re.compile(r'^(?:vlan-?)?(\d{1,4})$', re.IGNORECASE)

#: The keys of a local_link_connection that Mercury understands.
LINK_KEYS = ('switch_id', 'switch_info', 'port_id', 'hostname')

#: VIF ids that name a network of Mercury's config (``[networks.NAME]``).
NETWORK_VIF = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$')

TENANT = ironic_network.TENANT_NETWORK
IDLE = ironic_network.IDLE_NETWORK

#: The steps whose network is recorded on the ports as
#: ``<step>_vif_port_id`` while it is on, in the order Ironic's
#: ``get_current_vif`` looks for them (the tenant VIF last).
STEP_VIF_ORDER = ('cleaning', 'provisioning', 'rescuing', 'inspection',
                  'servicing')


def vif_vlan(vif_id):
    """The VLAN a VIF id names, or None."""
    m = VLAN_VIF.match(str(vif_id or ''))
    if not m:
        return None
    vlan = int(m.group(1))
    return vlan if 1 <= vlan <= 4094 else None


def vif_network(vif_id):
    """The network name a VIF id is (resolved by Mercury from its
    ``[networks]``), or None when it is a VLAN number or not a name."""
    vif = str(vif_id or '')
    if VLAN_VIF.match(vif) or not NETWORK_VIF.match(vif):
        return None
    return vif


def step_vif_key(network_type):
    return '%s_vif_port_id' % network_type


@dataclasses.dataclass(frozen=True)
class Net:
    """The L2 config a port gets at a step: Ironic's SwitchPortConfig, or a
    network name Mercury resolves (``network``, access mode)."""

    mode: str
    native_vlan: Optional[int] = None
    allowed_vlans: Optional[tuple] = None
    network: Optional[str] = None

    @classmethod
    def of(cls, config):
        if config is None:
            return None
        allowed = (tuple(sorted(config.allowed_vlans))
                   if config.allowed_vlans else None)
        return cls(mode=config.mode, native_vlan=config.native_vlan,
                   allowed_vlans=allowed)

    @classmethod
    def of_vif(cls, vif_id):
        vlan = vif_vlan(vif_id)
        if vlan:
            return cls(mode='access', native_vlan=vlan)
        name = vif_network(vif_id)
        return cls(mode='access', network=name) if name else None

    @property
    def is_valid(self):
        if not self.mode:
            return False
        if self.mode == 'access':
            return self.native_vlan is not None or bool(self.network)
        return self.allowed_vlans is not None

    def describe(self):
        if self.network:
            return self.network
        if self.mode == 'access':
            return 'vlan-%s' % self.native_vlan
        return '%s/native_vlan=%s/allowed_vlans=%s' % (
            self.mode, self.native_vlan,
            ','.join(str(v) for v in self.allowed_vlans or ()))


class MercuryNetwork(base.NetworkInterface):
    """Switch ports configured by Mercury, over SSH to the executor host."""

    def __init__(self):
        super().__init__()
        self.client = mercury_client.MercuryClient()

    # -- configuration ----------------------------------------------------

    def get_properties(self):
        return {}

    @staticmethod
    def _network_config(task, network_type):
        """The network a lifecycle step uses, from driver_info or config."""
        value = task.node.driver_info.get('%s_network' % network_type)
        if not value:
            value = getattr(CONF.ironic_networking,
                            '%s_network' % network_type, '')
        if not value:
            return None
        return SwitchPortConfig.from_string(value, network_type)

    @staticmethod
    def _switchport(port):
        sp = (port.extra or {}).get('switchport')
        return SwitchPortConfig.from_switchport(sp) if sp else None

    def _port_config(self, task, port, network_type, global_config):
        """The L2 config (a :class:`Net`) a port gets at a step, or None to
        leave it alone."""
        if network_type == TENANT:
            net = Net.of_vif((port.internal_info or {}).get(VIF_KEY))
            if net:
                return net
            return Net.of(self._switchport(port))
        if global_config is not None and global_config.is_valid:
            return Net.of(global_config)
        return Net.of(self._switchport(port))

    @staticmethod
    def _link(port):
        link = port.local_link_connection or {}
        return {k: link[k] for k in LINK_KEYS if link.get(k)}

    @staticmethod
    def _switch_link(port):
        """The switch hop of a port (switch_id / switch_info + port_id), or
        None (no link, or a SmartNIC port)."""
        if smartnic.is_smartnic(port):
            return None
        link = MercuryNetwork._link(port)
        if not link.get('port_id') or not (link.get('switch_id')
                                           or link.get('switch_info')):
            return None
        return link

    @staticmethod
    def _device_key(link):
        return (link.get('switch_info') or link.get('hostname') or '',
                link.get('switch_id') or '')

    # -- requests -----------------------------------------------------------

    def _reason(self, task, action, network_type):
        fields = {'action': action, 'network': network_type,
                  'node': task.node.uuid, 'node_name': task.node.name or '',
                  'request_id': getattr(task.context, 'request_id', '') or ''}
        try:
            return CONF.mercury.reason_format.format(**fields)
        except (KeyError, IndexError, ValueError):
            return 'ironic: {action} {network} network for node {node}'.format(
                **fields)

    def _base_request(self, task, op, link, action, network_type):
        req = {'op': op,
               'local_link_connection': {k: v for k, v in link.items()
                                         if k != 'port_id'},
               'reason': self._reason(task, action, network_type),
               'node_uuid': task.node.uuid,
               'lifecycle': network_type}
        request_id = getattr(task.context, 'request_id', None)
        if request_id:
            req['request_id'] = request_id
        return req

    def _batches(self, task, network_type, ports=None):
        """Groups (port, config, link) by switch, skipping ports Mercury
        cannot or need not touch. LAG members at the tenant step are left
        to the LAG."""
        global_config = (None if network_type == TENANT
                         else self._network_config(task, network_type))
        lag_members = (self._lag_member_ids(task) if network_type == TENANT
                       else set())
        batches = collections.OrderedDict()
        if smartnic.is_dpu_of_parent(task):
            LOG.warning('Node %(node)s is the DPU of its parent node '
                        '%(parent)s: its ports are the card\'s uplink, which '
                        'Mercury programs through the parent\'s requests; '
                        'the %(net)s network is not put on them (set this '
                        'node\'s network_interface to noop)',
                        {'node': task.node.uuid,
                         'parent': task.node.parent_node,
                         'net': network_type})
            return []
        for port in (task.ports if ports is None else ports):
            if smartnic.is_smartnic(port):
                continue  # the card hop: _cards
            link = self._switch_link(port)
            if link is None:
                LOG.warning('Port %(port)s of node %(node)s has no usable '
                            'local_link_connection (switch_id or '
                            'switch_info, and port_id): it is not put on '
                            'the %(net)s network',
                            {'port': port.uuid, 'node': task.node.uuid,
                             'net': network_type})
                continue
            if port.id in lag_members:
                continue
            config = self._port_config(task, port, network_type,
                                       global_config)
            if config is None or not config.is_valid:
                LOG.debug('Port %s has no %s network; skipped', port.uuid,
                          network_type)
                continue
            batches.setdefault(self._device_key(link), []).append(
                (port, config, link))
        return list(batches.values())

    def _idle_vlan(self, task):
        idle = self._network_config(task, IDLE)
        return idle.native_vlan if idle else None

    def _update_request(self, task, batch, network_type):
        idle_vlan = self._idle_vlan(task)
        req = self._base_request(task, 'update_port', batch[0][2],
                                 'configure', network_type)
        items = []
        for port, config, link in batch:
            item = {'port': link['port_id'], 'mode': config.mode,
                    'description': 'Ironic Port %s' % port.uuid}
            if config.native_vlan is not None:
                item['native_vlan'] = config.native_vlan
            elif config.network:
                item['network'] = config.network
            if config.allowed_vlans and config.mode != 'access':
                item['allowed_vlans'] = sorted(config.allowed_vlans)
            if idle_vlan is not None:
                item['default_vlan'] = idle_vlan
            items.append(item)
        req['ports'] = items
        if len(batch) == 1:
            req['port_uuid'] = batch[0][0].uuid
        return req

    def _reset_request(self, task, batch, network_type):
        idle_vlan = self._idle_vlan(task)
        req = self._base_request(task, 'reset_port', batch[0][2],
                                 'unconfigure', network_type)
        items = []
        for port, config, link in batch:
            item = {'port': link['port_id']}
            if config.native_vlan is not None:
                item['native_vlan'] = config.native_vlan
            elif config.network:
                item['network'] = config.network
            if config.allowed_vlans and config.mode != 'access':
                item['allowed_vlans'] = sorted(config.allowed_vlans)
            if idle_vlan is not None:
                item['default_vlan'] = idle_vlan
            items.append(item)
        req['ports'] = items
        if len(batch) == 1:
            req['port_uuid'] = batch[0][0].uuid
        return req

    def _send(self, request):
        try:
            return self.client.call(request)
        except mercury_client.MercuryError as e:
            if e.invalid:
                raise exception.InvalidParameterValue(str(e))
            raise exception.NetworkError(str(e))

    def _describe(self, batch):
        link = batch[0][2]
        return '%s (%s)' % (link.get('switch_info') or link.get('switch_id'),
                            ', '.join(b[2]['port_id'] for b in batch))

    # -- SmartNIC ports (the card hop) --------------------------------------

    def _cards(self, task, network_type, ports=None):
        """(port, Net, card link) for the SmartNIC ports that get a network
        at this step."""
        global_config = (None if network_type == TENANT
                         else self._network_config(task, network_type))
        out = []
        for port in (task.ports if ports is None else ports):
            if not smartnic.is_smartnic(port):
                continue
            link = smartnic.card_link(port)
            if link is None:
                LOG.warning('SmartNIC port %s has no hostname and port_id '
                            'in its local_link_connection: not plugged',
                            port.uuid)
                continue
            config = self._port_config(task, port, network_type,
                                       global_config)
            if config is None or not config.is_valid:
                LOG.debug('SmartNIC port %s has no %s network; skipped',
                          port.uuid, network_type)
                continue
            out.append((port, config, link))
        return out

    def _plug(self, task, port, config, link, network_type):
        self._send(self._plug_request(task, port, config, link,
                                      network_type))

    def _plug_request(self, task, port, config, link, network_type):
        base = self._base_request(task, 'plug_port', {}, 'configure',
                                  network_type)
        base.pop('local_link_connection', None)
        vif = (port.internal_info or {}).get(VIF_KEY)
        if network_type != TENANT or not vif:
            # No VIF of its own at this step: the representor is named for
            # the step and the port.
            vif = '%s-%s' % (network_type, port.uuid)
        vlan = config.native_vlan if config.mode == 'access' else None
        return smartnic.plug_request(base, link, port, vif, vlan=vlan,
                                     network=config.network)

    def _unplug(self, task, port, link, network_type):
        base = self._base_request(task, 'unplug_port', {}, 'unconfigure',
                                  network_type)
        base.pop('local_link_connection', None)
        self._send(smartnic.unplug_request(base, link, port))

    # -- configure / unconfigure ------------------------------------------

    def _configure(self, task, network_type, ports=None):
        """Puts ports on a network: one Mercury request per switch, one plug
        per SmartNIC port. On failure the node's ports go back to idle first
        (reset_to_idle_on_failure)."""
        LOG.info('Mercury: configuring the %s network for node %s',
                 network_type, task.node.uuid)
        configured = []
        try:
            for batch in self._batches(task, network_type, ports):
                self._send(self._update_request(task, batch, network_type))
                configured.extend((p, c) for p, c, _ in batch)
            for port, config, link in self._cards(task, network_type, ports):
                self._plug(task, port, config, link, network_type)
                configured.append((port, config))
            if network_type == TENANT and ports is None:
                self._configure_lags(task)
        except (exception.InvalidParameterValue,
                exception.NetworkError) as e:
            msg = ('Failed to configure the %(net)s network for node '
                   '%(node)s: %(err)s'
                   % {'net': network_type, 'node': task.node.uuid, 'err': e})
            LOG.error(msg)
            if CONF.mercury.reset_to_idle_on_failure:
                self._back_to_idle(task, network_type, ports)
            raise type(e)(msg)
        if network_type != TENANT and ports is None:
            self._record_step(configured, network_type)

    @staticmethod
    def _record_step(configured, network_type):
        """Records the step's network on each port it put there
        (``<step>_vif_port_id``, what ``get_current_vif`` reports)."""
        for port, config in configured:
            info = dict(port.internal_info or {})
            info[step_vif_key(network_type)] = config.describe()
            port.internal_info = info
            port.save()

    @staticmethod
    def _forget_step(task, network_type, ports=None):
        key = step_vif_key(network_type)
        for port in (task.ports if ports is None else ports):
            if key in (port.internal_info or {}):
                info = dict(port.internal_info)
                info.pop(key, None)
                port.internal_info = info
                port.save()

    def _back_to_idle(self, task, network_type, ports=None):
        try:
            self._unconfigure(task, network_type, ports)
        except exception.IronicException as e:
            LOG.error('Could not return the ports of node %s to idle after '
                      'a failure: %s', task.node.uuid, e)

    def _unconfigure(self, task, network_type, ports=None):
        """Returns ports to idle (one Mercury request per switch) and unplugs
        SmartNIC representors; tries every one, then raises NetworkError
        naming each failure."""
        LOG.info('Mercury: removing the %s network from node %s',
                 network_type, task.node.uuid)
        errors = []
        if network_type == TENANT and ports is None:
            errors.extend(self._delete_lags(task))
        for batch in self._batches(task, network_type, ports):
            try:
                self._send(self._reset_request(task, batch, network_type))
            except (exception.InvalidParameterValue,
                    exception.NetworkError) as e:
                errors.append('%s: %s' % (self._describe(batch), e))
        for port, _config, link in self._cards(task, network_type, ports):
            try:
                self._unplug(task, port, link, network_type)
            except (exception.InvalidParameterValue,
                    exception.NetworkError) as e:
                errors.append('%s (%s): %s' % (smartnic.card_name(link),
                                               link['port_id'], e))
        if network_type != TENANT and ports is None:
            self._forget_step(task, network_type)
        if errors:
            raise exception.NetworkError(
                'Failed to remove the %(net)s network from node %(node)s: '
                '%(errs)s' % {'net': network_type, 'node': task.node.uuid,
                              'errs': '; '.join(errors)})

    # -- LAGs -------------------------------------------------------------

    @staticmethod
    def _aggregation(pg):
        """Ironic's port group bond mode as a Mercury aggregation mode."""
        return 'lacp' if str(pg.mode or '') in ('802.3ad', '4') else 'static'

    def _lag_config(self, pg):
        """The LAG a port group is at the tenant step: its ``extra['lag']``,
        with a VIF attached to the port group deciding the VLAN; None when
        it is not a LAG."""
        lag = dict((pg.extra or {}).get('lag') or {})
        net = Net.of_vif((pg.internal_info or {}).get(VIF_KEY))
        if not lag and net is None:
            return None
        lag.setdefault('aggregation_mode', self._aggregation(pg))
        if net is not None:
            lag.setdefault('mode', 'access')
            lag.pop('network', None)
            if net.native_vlan is not None:
                lag['native_vlan'] = net.native_vlan
            else:
                lag.pop('native_vlan', None)
                lag['network'] = net.network
        return lag

    def _lag_groups(self, task, portgroups=None):
        """(portgroup, lag config, members, link) for port groups that are
        LAGs (``extra['lag']`` or a VIF) whose members share one switch."""
        out = []
        for pg in (task.portgroups if portgroups is None else portgroups):
            lag = self._lag_config(pg)
            if not lag:
                continue
            members = [p for p in task.ports if p.portgroup_id == pg.id]
            links = [self._switch_link(p) for p in members]
            keys = {self._device_key(link) for link in links if link}
            if not members or len(keys) != 1 or not all(links):
                LOG.warning('Port group %s: LAG members must all have a '
                            'local_link_connection on one switch; not '
                            'configured as a LAG', pg.uuid)
                continue
            out.append((pg, lag, members, links[0]))
        return out

    def _lag_member_ids(self, task):
        return {p.id for _, _, members, _ in self._lag_groups(task)
                for p in members}

    @staticmethod
    def _lag_name(pg):
        return pg.name or 'lag-%s' % pg.uuid[:8]

    def _lag_request(self, task, pg, lag, members, link):
        idle_vlan = self._idle_vlan(task)
        req = self._base_request(task, 'update_lag', link, 'configure',
                                 TENANT)
        req.update({'lag': self._lag_name(pg),
                    'members': [self._link(p)['port_id'] for p in members],
                    'aggregation_mode': lag.get('aggregation_mode', 'lacp'),
                    'mode': lag['mode'],
                    'description': 'Ironic PortGroup %s' % pg.uuid})
        if lag.get('native_vlan') is not None:
            req['native_vlan'] = lag['native_vlan']
        elif lag.get('network'):
            req['network'] = lag['network']
        if lag.get('allowed_vlans') and lag['mode'] != 'access':
            req['allowed_vlans'] = sorted(lag['allowed_vlans'])
        if idle_vlan is not None:
            req['default_vlan'] = idle_vlan
        return req

    def _configure_lags(self, task, portgroups=None):
        for pg, lag, members, link in self._lag_groups(task, portgroups):
            self._send(self._lag_request(task, pg, lag, members, link))

    def _delete_lag_request(self, task, pg, members, link):
        req = self._base_request(task, 'delete_lag', link, 'unconfigure',
                                 TENANT)
        req.update({'lag': self._lag_name(pg),
                    'members': [self._link(p)['port_id'] for p in members]})
        return req

    def _delete_lags(self, task, portgroups=None):
        errors = []
        for pg, lag, members, link in self._lag_groups(task, portgroups):
            try:
                self._send(self._delete_lag_request(task, pg, members, link))
            except (exception.InvalidParameterValue,
                    exception.NetworkError) as e:
                errors.append('LAG %s: %s' % (self._lag_name(pg), e))
        return errors

    # -- validation -------------------------------------------------------

    def validate(self, task):
        """Checks port switchport and port group LAG settings, the network
        strings, attached VIFs, SmartNIC cards (Mercury must know the card),
        and that the executor host is configured. Ports without a link are
        logged as a warning."""
        if not CONF.mercury.host:
            raise exception.InvalidParameterValue(
                '[mercury]host is not configured: the mercury network '
                'interface needs the executor host')
        for network_type in (IDLE, ironic_network.INSPECTION_NETWORK,
                             ironic_network.CLEANING_NETWORK,
                             ironic_network.PROVISIONING_NETWORK,
                             ironic_network.RESCUING_NETWORK,
                             ironic_network.SERVICING_NETWORK):
            self._network_config(task, network_type)
        for port in task.ports:
            sp = (port.extra or {}).get('switchport')
            if sp:
                try:
                    jsonschema.validate(sp, schemas.SWITCHPORT_SCHEMA)
                except jsonschema.ValidationError as e:
                    raise exception.InvalidParameterValue(
                        'Invalid switchport configuration for port %s: %s'
                        % (port.uuid, e.message))
                if port.pxe_enabled and sp.get('mode') != 'access':
                    raise exception.InvalidParameterValue(
                        'Port %s is PXE-enabled, so its switchport mode must '
                        'be access' % port.uuid)
            vif = (port.internal_info or {}).get(VIF_KEY)
            if vif and Net.of_vif(vif) is None:
                raise exception.InvalidParameterValue(
                    'VIF %s on port %s names no VLAN or network' % (vif,
                                                                   port.uuid))
            if smartnic.is_smartnic(port):
                self._validate_card(task, port)
            elif self._switch_link(port) is None:
                LOG.warning('Port %(port)s of node %(node)s has no '
                            'local_link_connection Mercury can use '
                            '(switch_id or switch_info, and port_id; '
                            'SmartNIC: hostname and port_id): no network '
                            'step will configure it',
                            {'port': port.uuid, 'node': task.node.uuid})
        for pg in task.portgroups:
            lag = (pg.extra or {}).get('lag')
            if lag:
                try:
                    jsonschema.validate(lag, schemas.LAG_SCHEMA)
                except jsonschema.ValidationError as e:
                    raise exception.InvalidParameterValue(
                        'Invalid LAG configuration for port group %s: %s'
                        % (pg.uuid, e.message))

    def _validate_card(self, task, port):
        """A SmartNIC port needs hostname and port_id, and a card Mercury
        knows (an ``ovs`` device whose name or alias is the hostname). When
        the hostname names a DPU child node of this node, the switch port
        that child node's own port links to must be the card's ``uplink`` in
        Mercury's configuration (the switch hop Mercury programs)."""
        link = smartnic.card_link(port)
        if link is None:
            raise exception.InvalidParameterValue(
                'SmartNIC port %s must have hostname and port_id in its '
                'local_link_connection' % port.uuid)
        result = self._send(smartnic.validity_request(link))
        data = result.get('data') or {}
        card = smartnic.card_name(link)
        if not data.get('valid'):
            raise exception.InvalidParameterValue(
                'SmartNIC port %(port)s: card %(card)s is not usable through '
                'Mercury: %(why)s' % {'port': port.uuid, 'card': card,
                                      'why': data.get('reason')
                                      or result.get('msg')})
        child = smartnic.dpu_child(task, link['hostname'])
        if child is None:
            return
        cabled = smartnic.cabled_links(task, child)
        uplink = data.get('uplink')
        if not cabled:
            LOG.warning('DPU child node %(child)s of node %(node)s has no '
                        'port with a switch link; the switch hop is '
                        'Mercury\'s configured uplink of %(card)s: %(up)s',
                        {'child': child.uuid, 'node': task.node.uuid,
                         'card': card, 'up': uplink or 'none (card only)'})
            return
        where = ', '.join('%s %s' % (c.get('switch_info')
                                     or c.get('switch_id'), c['port_id'])
                          for c in cabled)
        if not uplink:
            raise exception.InvalidParameterValue(
                'SmartNIC port %(port)s: card %(card)s is DPU child node '
                '%(child)s of this node, cabled to %(where)s, but Mercury\'s '
                'configuration names no uplink for %(dev)s, so the switch '
                'port facing the card would never carry the network: add '
                'uplink = { device = "...", port = "..." } to '
                '[devices.%(dev)s] in mercury.toml'
                % {'port': port.uuid, 'card': card, 'child': child.uuid,
                   'where': where, 'dev': result.get('device') or card})
        for c in cabled:
            answer = self._send(smartnic.validity_request_switch(c))
            d = answer.get('data') or {}
            if (d.get('valid') and d.get('device') == uplink.get('device')
                    and uplink.get('port') in (d.get('ports') or [])):
                return
        raise exception.InvalidParameterValue(
            'SmartNIC port %(port)s: DPU child node %(child)s says card '
            '%(card)s is cabled to %(where)s, but Mercury\'s configuration '
            'says its uplink is %(updev)s %(upport)s: correct the child '
            'node\'s port local_link_connection or the uplink in '
            'mercury.toml' % {'port': port.uuid, 'child': child.uuid,
                              'card': card, 'where': where,
                              'updev': uplink.get('device'),
                              'upport': uplink.get('port')})

    def validate_rescue(self, task):
        self._network_config(task, ironic_network.RESCUING_NETWORK)

    def validate_inspection(self, task):
        self._network_config(task, ironic_network.INSPECTION_NETWORK)

    # -- lifecycle steps ----------------------------------------------------

    def add_provisioning_network(self, task):
        self._configure(task, ironic_network.PROVISIONING_NETWORK)

    def remove_provisioning_network(self, task):
        self._unconfigure(task, ironic_network.PROVISIONING_NETWORK)

    def configure_tenant_networks(self, task):
        self._configure(task, TENANT)

    def unconfigure_tenant_networks(self, task):
        self._unconfigure(task, TENANT)

    def add_cleaning_network(self, task):
        self._configure(task, ironic_network.CLEANING_NETWORK)
        return {}

    def remove_cleaning_network(self, task):
        self._unconfigure(task, ironic_network.CLEANING_NETWORK)

    def add_rescuing_network(self, task):
        self._configure(task, ironic_network.RESCUING_NETWORK)
        return {}

    def remove_rescuing_network(self, task):
        self._unconfigure(task, ironic_network.RESCUING_NETWORK)

    def add_inspection_network(self, task):
        self._configure(task, ironic_network.INSPECTION_NETWORK)
        return {}

    def remove_inspection_network(self, task):
        self._unconfigure(task, ironic_network.INSPECTION_NETWORK)

    def add_servicing_network(self, task):
        self._configure(task, ironic_network.SERVICING_NETWORK)
        return {}

    def remove_servicing_network(self, task):
        self._unconfigure(task, ironic_network.SERVICING_NETWORK)

    def need_power_on(self, task):
        """True when the node has SmartNIC ports: the card must be up for
        its representors to be configured (as Ironic's neutron interface)."""
        return any(smartnic.is_smartnic(p) for p in task.ports)

    def get_node_network_data(self, task):
        return task.node.network_data or {}

    # -- VIFs -------------------------------------------------------------

    def vif_list(self, task):
        return [{'id': p.internal_info[VIF_KEY]}
                for p in list(task.portgroups) + list(task.ports)
                if (p.internal_info or {}).get(VIF_KEY)]

    def get_current_vif(self, task, p_obj):
        """The VIF the port (or port group) is on now: the cleaning,
        provisioning, rescuing, inspection or servicing network while that
        step is on, else the tenant VIF (Ironic's order)."""
        info = p_obj.internal_info or {}
        for step in STEP_VIF_ORDER:
            if step_vif_key(step) in info:
                return info[step_vif_key(step)]
        return info.get(VIF_KEY)

    def vif_attach(self, task, vif_info):
        """Records a VIF naming a VLAN or a network on one free port group
        or port of the node; on an active node it is applied at once, on
        another a VIF naming a network is checked by Mercury first (check
        mode: the name, the VLAN's policy; nothing sent)."""
        vif_id = vif_info['id']
        if Net.of_vif(vif_id) is None:
            raise exception.InvalidParameterValue(
                'VIF %s names no VLAN or network: the mercury network '
                'interface takes VIF ids like vlan-120 or 120 (1-4094), or '
                'a network name of Mercury\'s [networks]' % vif_id)
        for p in list(task.ports) + list(task.portgroups):
            if (p.internal_info or {}).get(VIF_KEY) == vif_id:
                raise exception.VifAlreadyAttached(object_type='Port',
                                                   vif=vif_id,
                                                   object_uuid=p.uuid)
        target = self._free_target(task, vif_info)
        info = dict(target.internal_info or {})
        info[VIF_KEY] = vif_id
        target.internal_info = info
        if (vif_network(vif_id)
                and task.node.provision_state != states.ACTIVE):
            try:
                self._check_vif(task, target)
            except exception.InvalidParameterValue:
                info.pop(VIF_KEY, None)
                target.internal_info = info
                raise
        target.save()
        if task.node.provision_state == states.ACTIVE:
            try:
                self._apply_vif(task, target)
            except exception.IronicException:
                info.pop(VIF_KEY, None)
                target.internal_info = info
                target.save()
                raise

    def _check_vif(self, task, target):
        """A VIF naming a network, attached to a node that is not active:
        asks Mercury in check mode (the device is read, nothing is sent)
        what the tenant step would do with it, so that a name Mercury's
        ``[networks]`` does not have, or a VLAN its policy refuses, fails
        the attach instead of the deploy. A device that cannot be read now
        is only a warning: the step checks again when it applies."""
        if self._is_portgroup(task, target):
            requests = [self._lag_request(task, pg, lag, members, link)
                        for pg, lag, members, link
                        in self._lag_groups(task, [target])]
        else:
            requests = [self._update_request(task, batch, TENANT)
                        for batch in self._batches(task, TENANT, [target])]
            requests += [self._plug_request(task, port, config, link, TENANT)
                         for port, config, link
                         in self._cards(task, TENANT, [target])]
        for req in requests:
            req['check'] = True
            try:
                self._send(req)
            except exception.NetworkError as e:
                LOG.warning('VIF %(vif)s: Mercury could not check it now '
                            '(it is checked again when the tenant network '
                            'is applied): %(err)s',
                            {'vif': target.internal_info.get(VIF_KEY),
                             'err': e})

    def _is_portgroup(self, task, obj):
        return any(obj.uuid == pg.uuid for pg in task.portgroups)

    def _apply_vif(self, task, target):
        if self._is_portgroup(task, target):
            self._configure_lags(task, [target])
        else:
            self._configure(task, TENANT, ports=[target])

    def _free_target(self, task, vif_info):
        """The port group or port a VIF goes on: the one named
        (``portgroup_uuid`` / ``port_uuid``), else a free port group whose
        members have links, else a free port with a link (PXE first), as
        Ironic's own VIF attach picks them."""
        vif = vif_info['id']
        free_groups = [pg for pg in task.portgroups
                       if not (pg.internal_info or {}).get(VIF_KEY)
                       and self._members_linked(task, pg)]
        lag_ids = self._lag_pg_ids(task) | {pg.id for pg in task.portgroups
                                            if (pg.internal_info or {})
                                            .get(VIF_KEY)}
        free_ports = [p for p in task.ports
                      if not (p.internal_info or {}).get(VIF_KEY)
                      and p.portgroup_id not in lag_ids]
        for key, pool, every in (('portgroup_uuid', free_groups,
                                  task.portgroups),
                                 ('port_uuid', free_ports, task.ports)):
            wanted = vif_info.get(key)
            if not wanted:
                continue
            for p in every:
                if p.uuid == wanted:
                    if p not in pool:
                        raise exception.VifAlreadyAttached(
                            object_type='Port', vif=vif, object_uuid=p.uuid)
                    return p
            if key == 'portgroup_uuid':
                raise exception.PortgroupNotFound(portgroup=wanted)
            raise exception.PortNotFound(port=wanted)
        if free_groups:
            return sorted(free_groups, key=lambda pg: pg.id)[0]
        usable = [p for p in free_ports if smartnic.is_smartnic(p)
                  or self._switch_link(p) is not None]
        if not usable:
            raise exception.NoFreePhysicalPorts(vif=vif)
        # PXE-enabled ports first, as Ironic's own VIF attach does.
        usable.sort(key=lambda p: (not p.pxe_enabled, p.id))
        return usable[0]

    def _members_linked(self, task, pg):
        members = [p for p in task.ports if p.portgroup_id == pg.id]
        return bool(members) and all(self._switch_link(p) for p in members)

    def _lag_pg_ids(self, task):
        return {pg.id for pg, _, _, _ in self._lag_groups(task)}

    def vif_detach(self, task, vif_id):
        """Forgets a VIF; on an active node its port (or LAG) returns to
        idle first."""
        for target in list(task.portgroups) + list(task.ports):
            if (target.internal_info or {}).get(VIF_KEY) != vif_id:
                continue
            if task.node.provision_state == states.ACTIVE:
                if self._is_portgroup(task, target):
                    errors = self._delete_lags(task, [target])
                    if errors:
                        raise exception.NetworkError('; '.join(errors))
                else:
                    self._unconfigure(task, TENANT, ports=[target])
            info = dict(target.internal_info)
            info.pop(VIF_KEY, None)
            target.internal_info = info
            target.save()
            return
        raise exception.VifNotAttached(vif=vif_id, node=task.node.uuid)

    # -- changes to ports ------------------------------------------------

    def _target(self, task, port, network_type):
        """What a port is on at a step, to compare before and after a
        change: (hop, link, Net), or None when no step touches it."""
        if network_type == TENANT and port.portgroup_id in \
                self._lag_pg_ids(task):
            return None  # the LAG's
        global_config = (None if network_type == TENANT
                         else self._network_config(task, network_type))
        config = self._port_config(task, port, network_type, global_config)
        if config is None or not config.is_valid:
            return None
        if smartnic.is_smartnic(port):
            link = smartnic.card_link(port)
            hop = 'card'
            # The representor carries the MAC (external_ids:attached-mac).
            mac = port.address
        else:
            link = self._switch_link(port)
            hop = 'switch'
            mac = None
        if link is None:
            return None
        return (hop, tuple(sorted(link.items())), config, mac)

    def port_changed(self, task, port_obj):
        """Acts only when what the port is on changes, as
        ``ironic-networking`` does: a new link resets (or unplugs) the old
        switch port and configures the new one; a new switchport or VIF
        re-declares the port; a link or network removed returns the old
        switch port to idle. A new MAC on a SmartNIC port re-plugs its
        representor in place (``attached-mac``). A change to anything else (a
        label in ``extra``, a switch port's MAC) sends nothing."""
        changed = port_obj.obj_what_changed()
        if not ({'extra', 'local_link_connection', 'is_smartnic',
                 'internal_info', 'portgroup_id', 'address'} & changed):
            return
        network_type = ironic_network.get_network_type_for_state(
            task.node.provision_state)
        if network_type == IDLE:
            return
        original = next((p for p in task.ports if p.uuid == port_obj.uuid),
                        None)
        old = (self._target(task, original, network_type)
               if original is not None else None)
        new = self._target(task, port_obj, network_type)
        if old == new:
            LOG.debug('Port %s changed, but not what the %s network puts '
                      'on it: nothing to do', port_obj.uuid, network_type)
            return
        if old is not None and (new is None or old[:2] != new[:2]):
            try:
                self._unconfigure(task, network_type, ports=[original])
            except exception.NetworkError as e:
                LOG.warning('Port %s: the old switch port was not reset: %s',
                            port_obj.uuid, e)
        if new is not None:
            self._configure(task, network_type, ports=[port_obj])

    def portgroup_changed(self, task, portgroup_obj):
        """As ``port_changed``, for a LAG: on a node on its tenant network,
        a changed LAG (name, mode, VLANs, VIF) is deleted under its old name
        when the name changed and declared again; anything else sends
        nothing."""
        changed = portgroup_obj.obj_what_changed()
        if not ({'extra', 'name', 'mode', 'internal_info'} & changed):
            return
        if ironic_network.get_network_type_for_state(
                task.node.provision_state) != TENANT:
            return
        original = next((pg for pg in task.portgroups
                         if pg.uuid == portgroup_obj.uuid), None)
        old = self._lag_groups(task, [original]) if original else []
        new = self._lag_groups(task, [portgroup_obj])
        describe = [(self._lag_name(pg), lag, link)
                    for pg, lag, _, link in old]
        if describe == [(self._lag_name(pg), lag, link)
                        for pg, lag, _, link in new]:
            LOG.debug('Port group %s changed, but not its LAG: nothing to '
                      'do', portgroup_obj.uuid)
            return
        if old and (not new or self._lag_name(original)
                    != self._lag_name(portgroup_obj)):
            errors = self._delete_lags(task, [original])
            if errors:
                LOG.warning('Port group %s: the old LAG was not removed: %s',
                            portgroup_obj.uuid, '; '.join(errors))
        for pg, lag, members, link in new:
            self._send(self._lag_request(task, pg, lag, members, link))
