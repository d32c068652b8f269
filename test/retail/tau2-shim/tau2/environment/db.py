import json

from pydantic import BaseModel, ConfigDict

from tau2.utils import get_dict_hash


class DB(BaseModel):
    """As tau2.environment.db.DB (BaseModelNoExtra): extra fields forbidden, loaded from a JSON file."""

    model_config = ConfigDict(extra="forbid")

    @classmethod
    def load(cls, path: str):
        with open(path, "r") as f:
            return cls.model_validate(json.load(f))

    def get_hash(self) -> str:
        return get_dict_hash(self.model_dump())
