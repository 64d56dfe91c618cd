"""Issue 43 item 6: the offline demo honours a unit preference said in any language the embedder knows.

Before: "温度は華氏で教えてください" or "Мне удобнее в Фаренгейтах" was kept as a memory, but the
scripted model read the remembered unit with an English regex (``celsius|fahrenheit``), so the next
session got Celsius; English worked.
"""

from __future__ import annotations

import pytest

from cognizes.infra.db_threads import run_in_db_thread
from demo_agents.weather.unit_names import TABLE, build_table, unit_named
from memory_app.consolidation import run_job
from runtime_app.agents import get_runner
from tests.runtime.test_runner import calls, final_text, jobs, say

pytestmark = pytest.mark.django_db(transaction=True)

FAHRENHEIT = {
    "ja": "温度は華氏で教えてください",
    "ru": "Мне удобнее в Фаренгейтах",
    "zh": "请用华氏度告诉我温度",
    "ko": "온도는 화씨로 알려 주세요",
    "es": "Prefiero que me digas la temperatura en grados Fahrenheit",
    "de": "Temperaturen bitte immer in Fahrenheit",
    "fr": "Je préfère les températures en degrés Fahrenheit",
    "ar": "أفضل درجات الحرارة بالفهرنهايت",
}


@pytest.mark.parametrize("text", FAHRENHEIT.values(), ids=FAHRENHEIT.keys())
async def test_a_preference_told_in_any_language_is_used_in_the_next_session(weather_app, text):
    runner = get_runner(weather_app)
    told = await say(runner, "s1", text)
    assert "Fahrenheit" in final_text(told)  # acknowledged, not answered with the help text
    [job] = await jobs(session_id="s1")
    await run_in_db_thread(run_job, job.pk)

    asked = await say(runner, "s2", "What's the weather in Paris?")

    assert calls(asked)[-1] == ("get_weather", {"city": "Paris", "unit": "fahrenheit"})
    assert final_text(asked) == "[offline model] It's 64°F and clear in Paris."


CHANGED = {
    "ja": ("温度は華氏で教えてください", "やっぱり摂氏で教えてください"),
    "ru": ("Мне удобнее в Фаренгейтах", "Мне удобнее по Цельсию"),
    "zh": ("请用华氏度告诉我温度", "请用摄氏度告诉我温度"),
    "en-then-ja": ("I prefer Fahrenheit.", "温度は摂氏で教えてください"),
}


@pytest.mark.parametrize(("first", "then"), CHANGED.values(), ids=CHANGED.keys())
async def test_a_preference_changed_in_any_language_is_what_the_next_session_uses(weather_app, first, then):
    runner = get_runner(weather_app)
    for session_id, text in (("s1", first), ("s2", then)):
        await say(runner, session_id, text)
        [job] = await jobs(session_id=session_id)
        await run_in_db_thread(run_job, job.pk)

    asked = await say(runner, "s3", "What's the weather in Paris?")

    assert calls(asked)[-1] == ("get_weather", {"city": "Paris", "unit": "celsius"})


@pytest.mark.parametrize(
    ("text", "unit"),
    [
        ("What's the weather in Paris?", None),
        ("I prefer window seats.", None),
        ("中华人民共和国", None),  # 华 alone is China's, not Fahrenheit's
        ("It was 25 ℃ yesterday", "celsius"),
        ("Сегодня 75 °F", "fahrenheit"),
        ("Lieber Grad Celsius", "celsius"),
        ("Meglio in gradi Celsius", "celsius"),
        ("ฉันชอบองศาฟาเรนไฮต์", "fahrenheit"),
        ("Not Celsius: Fahrenheit, please", "fahrenheit"),  # a correction: the later holds
    ],
)
def test_a_unit_is_read_by_its_name_in_any_language_and_nothing_else_is(text, unit):
    assert unit_named(text) == unit


def test_the_table_is_cldrs_names_as_built():
    """``unit_names.json`` is what ``build_table`` makes from CLDR (Babel, a docs dependency): not hand-edited."""
    pytest.importorskip("babel")
    import json

    assert json.loads(TABLE.read_text(encoding="utf-8")) == build_table()


OTHER_THINGS = {
    "ja": ["私の名前は太郎です", "東京に住んでいます", "猫を二匹飼っています", "週末は山登りが好きです"],
    "ru": ["Меня зовут Алексей", "Я живу в Москве", "У меня две кошки", "По выходным я хожу в горы"],
}


@pytest.mark.parametrize("language", OTHER_THINGS)
async def test_the_preference_is_found_among_other_things_said_in_that_language(weather_app, language):
    """The English memory query still finds the preference when it is one memory of several (by meaning)."""
    runner = get_runner(weather_app)
    said = [*OTHER_THINGS[language][:2], FAHRENHEIT[language], *OTHER_THINGS[language][2:]]
    for number, text in enumerate(said):
        await say(runner, f"s{number}", text)
        [job] = await jobs(session_id=f"s{number}")
        await run_in_db_thread(run_job, job.pk)

    asked = await say(runner, "weather", "What's the weather in Paris?")

    assert calls(asked)[-1] == ("get_weather", {"city": "Paris", "unit": "fahrenheit"})
