"""The microversion headers of the API, in a module of their own so that
the ``[cors]`` defaults (which every process loads) name them without
loading Flask."""

HEADER = 'X-OpenStack-Ironic-Inspector-API-Version'
MIN_HEADER = 'X-OpenStack-Ironic-Inspector-API-Minimum-Version'
MAX_HEADER = 'X-OpenStack-Ironic-Inspector-API-Maximum-Version'
