"""What a small model needs and the paper's loop does not have: checks on what enters the scratchpad, how its
messages are ranked, and which answers are taken. ExtAgents calls one `Guards` object at those points and has no
branch of its own for them; `Guards()` (the knob `guards="none"`) does nothing at any of them, which is the paper's
protocol. Two sets are built from the parts below:

evidence (messages are the source's own words, joined to the question by a chain of names):
- admission: the chunk's sentences that support a reply are posted, not the reply (extlib.anchoring), and only those
  a chain of shared names joins to the question through the messages the agent was shown (extlib.connections): a
  true fact is never dropped for naming the question's entity, an invented claim never reaches the scratchpad, and
  a second hop waits until GKS shows its agent the first hop, which is what GKS is for (a sentence a reply was
  anchored to before it joined the chain is held, and posted when it joins); a reply about the question's
  subject also posts what its chunk says of the subject (the sentences naming it), whatever else the reply claims;
- ranking: messages one link from the question first, then two, ...;
- acceptance: an answer counts only when messages on such a chain state it, and only once every agent whose chunk
  names it has seen it (its message names it, or it was shown a message that does): the text may go on from the
  answer (a first hop's village, when the question asks for the county), and GKS is what shows it to that agent;
  a forced answer (the last step's) no such message states is no answer.

small-model (the design before; the replies themselves are posted):
- admission (`admit`): the grounding check of extlib.grounding: echoes of the question or of the shown messages and
  replies whose names or words are not in the agent's own chunk stay off the scratchpad (a 1.5B model asked about a
  person its chunk never mentions states the question's relation about them anyway);
- ranking (`rank`): a message follows the better-rated message it shares a name with, beyond the question's. A
  rating that judges each message alone scores a bridge fact ("Marrowby lies in Westmarch") low because it does not
  name the question's entity; without this it ranks last;
- acceptance (`refuses`): an answer that states nothing the messages hold beyond the question's words is no answer
  until the last step must answer (a small model that knows only the first hop invents the second).

Both: a KAR step over the very messages an earlier round's step read without an answer is not asked again
(`skip_repeats`: same prompt, same greedy reply).
"""

from __future__ import annotations

from dataclasses import dataclass

from .agents import Refusal
from .anchoring import about_the_subject, anchor
from .connections import links_from_question, on_a_chain
from .grounding import admission, answer_is_stated, names

GUARD_SETS = ("evidence", "small-model", "none")
ANCHOR_FLOOR = 0.5  # least share of a reply's claims that its chunk's sentences must hold (extlib.anchoring)
MIN_GROUNDING = 0.6  # chosen on labeled replies (benchmarks/grounding.py) and the seek-prompt benchmark
# Why a reply stays off the scratchpad, or an answer is not taken: how each reason begins in the rows (the lesson
# names a call's fate by them, extlib.lesson).
NOT_IN_CHUNK = "not in its chunk"
CLAIMS_NOTHING = "claims nothing beyond the question and the messages shown"
NO_CHAIN = "names nothing the question or the messages shown name"
ADDS_NOTHING = "adds nothing to the scratchpad"
NOT_STATED = "answer not stated by the messages"
NOT_SEEN = "has not seen the answer its chunk names"


@dataclass(frozen=True)
class Guards:
    min_grounding: float = 0.0  # least share of a reply's new words found in its own chunk; 0: no grounding check
    links: bool = False  # rank a message right after the better-rated one it shares a name with
    skip_repeats: bool = False  # no KAR step over messages an earlier step read without an answer
    anchor: float = 0.0  # post the chunk's sentences that hold this share of a reply's claims, not the reply; 0: off
    connected: bool = False  # post, rank and answer by the chain of names from the question (through what is shown)
    subject: bool = False  # with anchor: also post the chunk's sentences naming the question's subject, when the
    # reply is about it (a 1.5B model invents the asked relation instead of stating what its chunk says of the person)
    hold: bool = False  # with connected: a reply's sentences that no chain joins yet are held, and posted once a
    # later round shows the agent a message that joins them, whatever it replies then. Asked about the question's
    # person, the 1.5B model holding "Amos Pike was born in the county of Rutland" writes "Tobias Wrenfield was born
    # in Rutland" in round 1 (anchored to that note, not yet on a chain), and NONE in round 2 when shown the first hop
    synced_answers: bool = False  # an answer is taken only once every agent whose chunk names it has seen it: asked
    # "Which county ...?" and shown "X was born in the village of V", the 1.5B model answers V in 23 of 30 dev books
    # whatever the wording (benchmarks/reason_prompts.py); the agent whose chunk says where V lies has not seen V yet
    forced_stated: bool = False  # the last step's forced answer too must be stated by the messages (on a chain from
    # the question), or there is no answer: forced to answer "哪个省" from messages that hold no province, the 1.5B
    # model names one (zh-bridge dev zb-085)

    @property
    def stated_only(self) -> bool:
        """Answers must be stated by the messages whenever replies must be grounded in their chunks."""
        return self.min_grounding > 0 or self.connected

    def admit(self, reply: str, chunk: str, shown: list[str], question: str, template: frozenset[str] = frozenset(),
              posted: str = "", held: list[str] | None = None) -> tuple[str | None, str | None]:
        """(what goes on the scratchpad, None) or (None, why not): the chunk's sentences that support the reply
        (extlib.anchoring), with `connected` only those a chain of names joins to the question through the messages
        `shown` (a second hop waits until GKS shows its agent the first), unless `posted` (the scratchpad's text)
        holds them all; or the reply itself if it passes the grounding check (extlib.grounding.admission).
        `held` (with `hold`): the sentences of the agent's earlier replies that no chain joined yet; they are
        candidates again, and the list is left holding those still unjoined. `reply` may then be "" (a NONE)."""
        if self.anchor:
            found = anchor(reply, chunk, shown, question, template, self.anchor)
            subject = about_the_subject(reply, chunk, question, shown) if self.subject else []
            chosen = found.sentences + [s for s in subject if s not in found.sentences]
            earlier = [s for s in held or [] if s not in chosen] if self.hold else []
            if not chosen and not earlier:
                return None, (f"{NOT_IN_CHUNK}: its sentences hold {found.coverage:.2f} of the reply's claims"
                              if found.claims else CLAIMS_NOTHING)
            candidates = chosen + earlier
            chosen = on_a_chain(question, shown, candidates) if self.connected else candidates
            if self.hold and held is not None:
                held[:] = [s for s in candidates if s not in chosen]
            if not chosen:
                return None, f"{NO_CHAIN}: no chain to the question"
            if all(sentence in posted for sentence in chosen):
                return None, f"{ADDS_NOTHING}: its chunk's sentences are on it already"
            return " ".join(chosen), None
        why = admission(reply, chunk, shown, question, self.min_grounding, template) if self.min_grounding else None
        return (None, why) if why else (reply.strip(), None)

    def rank(self, order: list[int], notes: dict[int, str], question: str) -> list[int]:
        """Agent ids best first: `order` as rated; or its messages one link from the question first, then two, ...
        (the unconnected last); or with each message's linked messages right after it."""
        if self.connected:
            level = links_from_question(question, {i: notes[i] for i in order})
            return sorted(order, key=lambda i: level[i] or len(order) + 1)
        return follow_links(order, notes, question) if self.links else order

    def refuses(self, answer: str, messages: list[str], question: str, forced: bool = False) -> str | None:
        """Why an answer is not taken, or None: any is taken (no guards), one the messages state, or one that messages
        connected to the question by a chain of names state (an answer no connected message supports is no answer).
        A `forced` answer (the last step's) is taken whatever it says unless `forced_stated`."""
        if forced and not self.forced_stated:
            return None
        if self.connected:
            level = links_from_question(question, dict(enumerate(messages)))
            messages = [m for k, m in enumerate(messages) if level[k] is not None]
        if self.stated_only and not answer_is_stated(answer, messages, question):
            return NOT_STATED + (" on a chain from the question" if self.connected else "")
        return None

    def refusal(self, chunks: list[str], seen: dict[int, list[str]], notes: dict[int, str]) -> Refusal:
        """`refuses`, and with `synced_answers` also an answer whose names taken from the messages an agent of `seen`
        (agent -> the messages it is shown this round) has in its chunk while neither its message (`notes`) nor what
        it is shown names them."""
        if not self.synced_answers:
            return self.refuses
        chunk_names = [names(chunk) for chunk in chunks]  # once a question, not once a KAR step and agent

        def refuse(answer: str, messages: list[str], question: str, forced: bool = False) -> str | None:
            why = self.refuses(answer, messages, question, forced)
            new = names(answer) - names(question)
            asked = (new & names(" ".join(messages))) or new  # what it takes from the messages: in "湖南省芷苇浦村"
            # the village, to which the 1.5B model joined a province no message states
            if why or forced or not asked:  # no round follows a forced answer: no agent can be shown it
                return why
            unseen = next((i for i in seen if asked <= chunk_names[i] and not asked <= names(notes.get(i, ""))
                           and not any(asked <= names(m) for m in seen[i])), None)
            return None if unseen is None else f"chunk {unseen}'s agent {NOT_SEEN}: the text may go on from it"
        return refuse


NO_GUARDS = Guards()  # the paper's loop


def make_guards(name: str, grounding: float | None = None, links: bool | None = None) -> Guards:
    """The guard set `name`, with its grounding threshold and linked ranking as given, or the set's own:
    evidence (messages are their chunk's sentences, ranked and answered by the chain of names from the question),
    small-model (grounding check 0.6, linked ranking, stated answers), none (the paper's loop)."""
    if name == "evidence":
        return Guards(min_grounding=grounding or 0.0, links=bool(links), skip_repeats=True, anchor=ANCHOR_FLOOR,
                      connected=True, subject=True, hold=True, synced_answers=True, forced_stated=True)
    small = name == "small-model"
    return Guards(min_grounding=grounding if grounding is not None else (MIN_GROUNDING if small else 0.0),
                  links=links if links is not None else small, skip_repeats=small)


def follow_links(order: list[int], notes: dict[int, str], question: str) -> list[int]:
    """`order` with each message followed at once by the messages that name something it names beyond the
    question (best-rated first). Without this the second hop ranks last, and KAR's first steps and the broadcast
    never hold both hops together."""
    asked = names(question)
    keys = {i: names(notes[i]) - asked for i in order}
    out: list[int] = []
    for start in order:
        stack = [start]
        while stack:
            i = stack.pop()
            if i in out:
                continue
            out.append(i)
            stack.extend(reversed([j for j in order if j not in out and keys[i] & keys[j]]))
    return out
