import hashlib
import json


def get_dict_hash(obj: dict) -> str:
    """As tau2.utils.utils.get_dict_hash: sha256 of the sorted-keys JSON dump."""
    hash_string = json.dumps(obj, sort_keys=True, default=str)
    return hashlib.sha256(hash_string.encode()).hexdigest()
