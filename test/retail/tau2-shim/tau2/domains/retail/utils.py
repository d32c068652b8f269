import os

from tau2.domains.retail import reference_dir

RETAIL_DB_PATH = os.path.join(os.path.dirname(reference_dir()), "db.json")
