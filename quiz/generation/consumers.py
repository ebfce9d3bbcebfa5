"""The host's live view of a generation job: the stored progress on connect, then every change."""

from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from quiz.generation.jobs import generation_snapshot_for
from quiz.jobs.events import generation_group
from quiz.jobs.tokens import generation_token_job_id


class GenerationConsumer(AsyncJsonWebsocketConsumer):
    group_name = ""

    async def connect(self) -> None:
        job_id = int(self.scope["url_route"]["kwargs"]["job_id"])
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        # The page carries a signed token for its job: job ids are sequential, progress is the host's own.
        if generation_token_job_id((query.get("t") or [""])[0]) != job_id:
            await self.close(code=4403)
            return
        # Join first, then read: a change between the two arrives as an event after the snapshot.
        self.group_name = generation_group(job_id)
        await self.channel_layer.group_add(self.group_name, self.channel_name)
        await self.accept()
        snapshot = await self._snapshot(job_id)
        if snapshot is None:
            await self.send_json({"type": "error", "message": "That generation no longer exists."})
            await self.close(code=4404)
            return
        await self.send_json({"type": "progress", "job": snapshot})

    async def disconnect(self, code: int) -> None:
        if self.group_name:
            await self.channel_layer.group_discard(self.group_name, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        # The page only listens; cancelling is a form post.
        return

    async def generation_progress(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "progress", "job": event["job"]})

    @database_sync_to_async
    def _snapshot(self, job_id: int) -> dict[str, Any] | None:
        return generation_snapshot_for(job_id=job_id)
