"""Ironic integration for Mercury, the one-shot layer-2 executor.

``mercury_ironic.network.MercuryNetwork`` is the ``mercury`` network interface
(entry point ``ironic.hardware.interfaces.network``). It asks Mercury, on the
executor host, to put the node's switch ports on the right VLAN at each step
of the node's lifecycle, over SSH with a key whose ``authorized_keys`` line
forces ``mercury serve-ssh``. Ironic never holds switch credentials.
"""
