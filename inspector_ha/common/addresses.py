"""Address patterns and placeholders shared by the API, the processing
hooks and the PXE filter drivers."""

import re

#: A MAC address as Ironic stores it: six lower-case hex pairs and colons.
#: (``\Z``, not ``$``: a trailing newline does not match.)
MAC = re.compile(r'^[0-9a-f]{2}(:[0-9a-f]{2}){5}\Z')

#: BMC addresses that mean "none": an empty or unspecified address is
#: neither looked up nor compared.
NO_BMC = ('', '0.0.0.0', '::', '::/0', None)
