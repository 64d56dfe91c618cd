import json
import pytest
from asgiref.sync import sync_to_async
from cognizes.adk import PostgresSessionService
from tests.tracing.helpers import APP, ask, flush, make_runner
from tracing_app.models import Span, Trace

pytestmark = pytest.mark.django_db(transaction=True)

@sync_to_async
def dump(sid):
    out = []
    for t in Trace.objects.filter(session_id=sid):
        out.append({"trace": t.name})
        for s in t.spans.order_by("start_time"):
            out.append({"name": s.name, "parent": s.parent_span_id, "id": s.span_id, "attrs": s.attributes})
    return out

async def test_dump():
    service = PostgresSessionService()
    session = await service.create_session(app_name=APP, user_id="ada")
    await ask(make_runner(service), user_id="ada", session_id=session.id, text="Paris")
    await ask(make_runner(service), user_id="ada", session_id=session.id, text="Oslo")
    await flush()
    open("/tmp/ov/dump.json", "w").write(json.dumps(await dump(session.id), indent=1, ensure_ascii=False))
