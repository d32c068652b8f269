"""What the retail tools use of tau2.environment.toolkit: ToolType, is_tool, ToolKitBase."""

from enum import Enum
from typing import Callable, Dict, Optional

from tau2.utils import get_dict_hash

TOOL_ATTR = "__tool__"
TOOL_TYPE_ATTR = "__tool_type__"


class ToolType(str, Enum):
    READ = "read"
    WRITE = "write"
    THINK = "think"
    GENERIC = "generic"


def is_tool(tool_type: ToolType = ToolType.READ, mutates_state: Optional[bool] = None):
    def decorator(func):
        setattr(func, TOOL_ATTR, True)
        setattr(func, TOOL_TYPE_ATTR, tool_type)
        return func

    return decorator


class ToolKitBase:
    def __init__(self, db=None):
        self.db = db

    @property
    def tools(self) -> Dict[str, Callable]:
        names = [
            name
            for klass in type(self).__mro__
            for name, member in vars(klass).items()
            if getattr(member, TOOL_ATTR, False)
        ]
        return {name: getattr(self, name) for name in names}

    def use_tool(self, tool_name: str, **kwargs):
        if tool_name not in self.tools:
            raise ValueError(f"Tool '{tool_name}' not found.")
        return self.tools[tool_name](**kwargs)

    def tool_type(self, tool_name: str) -> ToolType:
        return getattr(self.tools[tool_name], TOOL_TYPE_ATTR)

    def get_db_hash(self) -> str:
        return get_dict_hash(self.db.model_dump())
