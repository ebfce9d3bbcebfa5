"""One JSON object per log line (LOG_FORMAT=json), for a log shipper that reads lines as records.

Every line has `time` (UTC, ISO 8601), `level`, `logger` and `message` (the %-arguments applied); the `extra`
fields a call passes come along under their own names, and a traceback as `exc_info`. A value JSON cannot
carry is written as its `repr`. A message's own newlines stay inside the JSON string, so one event stays one line.
"""

import json
import logging
from datetime import UTC, datetime
from typing import Any

# The attributes every LogRecord has: what is left over was passed as `extra`.
_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS and key not in entry and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack_info"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=repr, ensure_ascii=False)
