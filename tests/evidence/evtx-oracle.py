#!/usr/bin/python3
# The oracle of the .evtx reader's tests: Debian's python3-evtx (Willi Ballenthin's python-evtx).
# For each file named on the command line, prints one JSON line per record: the file, the record
# number and written time from the record header, and the record's XML exactly as evtx_dump.py
# prints it (record.xml()). A record python-evtx cannot render is printed with its error instead.
import json
import sys

import Evtx.Evtx as evtx

for path in sys.argv[1:]:
    with evtx.Evtx(path) as log:
        for record in log.records():
            out = {"file": path, "record": record.record_num(), "time": str(record.timestamp())}
            try:
                out["xml"] = record.xml()
            except Exception as e:  # noqa: BLE001 - reported to the test, which decides
                out["error"] = repr(e)
            sys.stdout.write(json.dumps(out) + "\n")
