"""The reference retail tools as a JSON-lines server for test/retail-differential.test.ts.

One request per line on stdin, one answer per line on stdout (JSON, ASCII):

  {"op": "use", "db": {...} | null}   the database to serve: this one (validated as RetailDB), or db.json
  {"op": "restore", "orders": [...], "users": [...], "products": [...]}
                                      these entries back as they are in that database (absent ones removed)
  {"op": "call", "tool": name, "args": {...}, "touch": {"orders": [...], "users": [...]}, "hash": bool}
                                      RetailTools.use_tool(name, **args); then the hash, when asked
  {"op": "hash"}                      the incremental hash and the reference's own get_db_hash()
  {"op": "tools"}                     the tool names and their ToolType
  {"op": "floats", "bits": [hex, ...]}  repr(x) and repr(round(x, 2)) of IEEE doubles given by their bits

A call answers {"ok": true, "result": json.dumps(model_dump() or the str, sort_keys=True)} or
{"ok": false, "error_type": class name, "error": str(exception)}, as tau2's environment catches it.

The hash after a call is get_db_hash() computed incrementally: json.dumps of every order, product and user
is kept and redone only for the entries the call names ("touch": its order, that order's user, its user),
then joined as json.dumps(db.model_dump(), sort_keys=True) joins them. "hash" checks it against the
reference's get_db_hash(), so an entry changed without being named is found at the next check.
"""

import hashlib
import json
import os
import struct
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pydantic import BaseModel  # noqa: E402

from tau2.domains.retail.data_model import Order, Product, RetailDB, User  # noqa: E402
from tau2.domains.retail.tools import RetailTools  # noqa: E402
from tau2.domains.retail.utils import RETAIL_DB_PATH  # noqa: E402

# `calculate` evaluates its expression with eval(): a call like "2(3)" compiles with a SyntaxWarning that
# tau2 would print to stderr; it changes nothing in the result.
warnings.simplefilter("ignore")

COLLECTIONS = {"orders": Order, "products": Product, "users": User}  # sorted, as sort_keys writes them


class Server:
    def __init__(self):
        with open(RETAIL_DB_PATH, "r") as f:
            self.file_db = json.load(f)
        self.use(None)

    def use(self, db):
        self.base = self.file_db if db is None else db
        self.tools = RetailTools(RetailDB.model_validate(self.base))
        self.cache = {}  # (collection, key) -> json.dumps of the entry
        self.joined = {}  # collection -> its entries joined

    def invalidate(self, collection, key):
        self.cache.pop((collection, key), None)
        self.joined.pop(collection, None)

    def restore(self, names):
        for collection, model in COLLECTIONS.items():
            entries = getattr(self.tools.db, collection)
            for key in names.get(collection, []):
                self.invalidate(collection, key)
                if key in self.base[collection]:
                    entries[key] = model.model_validate(self.base[collection][key])
                else:
                    entries.pop(key, None)

    def incremental_hash(self) -> str:
        parts = []
        for collection in COLLECTIONS:
            joined = self.joined.get(collection)
            if joined is None:
                entries = getattr(self.tools.db, collection)
                dumped = []
                for key in sorted(entries):
                    text = self.cache.get((collection, key))
                    if text is None:
                        text = json.dumps(entries[key].model_dump(), sort_keys=True)
                        self.cache[(collection, key)] = text
                    dumped.append(json.dumps(key) + ": " + text)
                joined = self.joined[collection] = ", ".join(dumped)
            parts.append(json.dumps(collection) + ": {" + joined + "}")
        return hashlib.sha256(("{" + ", ".join(parts) + "}").encode()).hexdigest()

    def call(self, request):
        try:
            result = self.tools.use_tool(request["tool"], **request["args"])
            if isinstance(result, BaseModel):
                result = result.model_dump()
            answer = {"ok": True, "result": json.dumps(result, sort_keys=True)}
        except Exception as e:  # as tau2's Environment.get_response: the observation is str(e)
            answer = {"ok": False, "error_type": type(e).__name__, "error": str(e)}
        for collection, keys in request.get("touch", {}).items():
            for key in keys:
                self.invalidate(collection, key)
        if request.get("hash"):
            answer["hash"] = self.incremental_hash()
        return answer

    def handle(self, request):
        op = request["op"]
        if op == "call":
            return self.call(request)
        if op == "use":
            self.use(request.get("db"))
            return {"ok": True}
        if op == "restore":
            self.restore(request)
            return {"ok": True}
        if op == "hash":
            return {"ok": True, "incremental": self.incremental_hash(), "reference": self.tools.get_db_hash()}
        if op == "tools":
            return {"ok": True, "tools": {name: self.tools.tool_type(name).value for name in self.tools.tools}}
        if op == "floats":
            values = [struct.unpack(">d", bytes.fromhex(bits))[0] for bits in request["bits"]]
            return {"ok": True, "repr": [repr(x) for x in values], "round2": [repr(round(x, 2)) for x in values]}
        return {"ok": False, "error_type": "Protocol", "error": f"unknown op {op!r}"}


def main() -> None:
    server = Server()
    for line in sys.stdin:
        answer = server.handle(json.loads(line))
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
