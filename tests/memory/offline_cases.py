"""A small labelled set for the offline extractor: which turns should become memories, which should supersede.

Each case is a conversation (author, text), the user's known memories (id, text),
the texts that should become memories, and the known ids they should supersede.
``bench/offline_extraction.py`` prints precision and recall over it;
``tests/memory/test_offline_extraction.py`` holds the extractor to every case.
"""

from __future__ import annotations

from dataclasses import dataclass, field

AGENT = "weather_agent"


@dataclass(frozen=True)
class Case:
    name: str
    turns: list[tuple[str, str]]
    remembered: list[str]
    known: list[tuple[str, str]] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)


CASES = [
    Case("a preference, then weather questions", [
        ("user", "I prefer Fahrenheit."),
        (AGENT, "Noted! I'll use Fahrenheit."),
        ("user", "What's the weather in London?"),
        (AGENT, "It's 59°F and cloudy in London."),
        ("user", "And in Madrid?"),
        (AGENT, "It's 77°F and sunny in Madrid."),
        ("user", "Thanks!"),
    ], remembered=["I prefer Fahrenheit."]),
    Case("a restated preference supersedes the old one", [
        ("user", "Actually I prefer Celsius now."),
        (AGENT, "Got it, Celsius from now on."),
    ], remembered=["Actually I prefer Celsius now."], known=[("m1", "I prefer Fahrenheit.")], superseded=["m1"]),
    Case("a preference of another kind does not", [
        ("user", "I prefer window seats."),
    ], remembered=["I prefer window seats."], known=[("m1", "I prefer Fahrenheit.")]),
    Case("the same preference twice in one session: the later holds", [
        ("user", "I prefer Fahrenheit."),
        (AGENT, "Okay."),
        ("user", "Hmm, no. I prefer Celsius."),
    ], remembered=["Hmm, no. I prefer Celsius."]),
    Case("a move supersedes the old home", [
        ("user", "I moved to Madrid last month."),
    ], remembered=["I moved to Madrid last month."], known=[("m1", "I live in Lisbon."), ("m2", "I have a cat.")],
       superseded=["m1"]),
    Case("a new favourite of the same thing", [
        ("user", "My favourite colour is green now."),
        ("user", "My favourite food is sushi."),
    ], remembered=["My favourite colour is green now.", "My favourite food is sushi."],
       known=[("m1", "My favourite colour is blue."), ("m2", "My favourite food is pasta.")],
       superseded=["m1", "m2"]),
    Case("a name", [
        ("user", "Hi! My name is Ada and I work at Initech."),
        (AGENT, "Nice to meet you, Ada."),
    ], remembered=["Hi! My name is Ada and I work at Initech."]),
    Case("the same value said again supersedes nothing", [
        ("user", "I live in Lisbon."),
    ], remembered=["I live in Lisbon."], known=[("m1", "I live in Lisbon.")]),
    Case("instructions to the agent", [
        ("user", "Please always answer in French."),
        ("user", "Remember that my sister's birthday is on May 3."),
        ("user", "Don't use emojis."),
    ], remembered=["Please always answer in French.", "Remember that my sister's birthday is on May 3.",
                   "Don't use emojis."]),
    Case("questions, even in the first person", [
        ("user", "Can you tell me the weather in Paris?"),
        ("user", "Do I need an umbrella tomorrow?"),
        ("user", "What did I say my favourite city was?"),
        ("user", "how about Tokyo"),
    ], remembered=[]),
    Case("a statement and a question in one turn keep the statement", [
        ("user", "I'm flying to Tokyo next week. Will it rain there?"),
    ], remembered=["I'm flying to Tokyo next week."]),
    Case("small talk and acknowledgements", [
        ("user", "Hello"), ("user", "ok"), ("user", "Great, thanks a lot!"), ("user", "That's interesting."),
        ("user", "Sounds good."),
    ], remembered=[]),
    Case("the agent's own replies and errors", [
        (AGENT, "I prefer to check the forecast first."),
        (AGENT, "My apologies, the weather service failed: timeout."),
        (AGENT, "You told me you like Celsius."),
    ], remembered=[]),
    Case("facts about the user's life", [
        ("user", "We adopted a dog called Rex."),
        ("user", "I'm allergic to peanuts."),
        ("user", "Our daughter starts school in September."),
        ("user", "I've been running every morning."),
    ], remembered=["We adopted a dog called Rex.", "I'm allergic to peanuts.",
                   "Our daughter starts school in September.", "I've been running every morning."]),
    Case("facts about the world are not the user's", [
        ("user", "The Eiffel Tower is in Paris."),
        ("user", "It is raining."),
    ], remembered=[]),
    Case("Chinese first person", [
        ("user", "我喜欢喝绿茶。"),
        ("user", "今天天气怎么样？"),
    ], remembered=["我喜欢喝绿茶。"]),
    Case("a new employer", [
        ("user", "I now work at Globex."),
    ], remembered=["I now work at Globex."], known=[("m1", "Hi! My name is Ada and I work at Initech.")],
       superseded=["m1"]),
    Case("a new call-me name replaces the old name", [
        ("user", "Please call me Addy."),
    ], remembered=["Please call me Addy."], known=[("m1", "My name is Ada.")], superseded=["m1"]),
]
