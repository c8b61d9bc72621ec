"""inspector-ha: an active-active, highly available ironic-inspector."""
