"""The final: the guide's FAQ, one question per item, the loop exercise and a written answer.

Each item opens with the guide's FAQ question (the guide's own words in Yorùbá for items 1, 2
and 4 of the Yorùbá edition; the course's Yorùbá for 3 and 5, which the guide asks in English),
then asks something to work out about it. 10 points: five choices, the loop exercise (3)
and the written answer (2). The loop exercise (FAQ 3 in code) is `faq_loop`.

About 400 lines on purpose: one assignment, read in its order; every prompt and choice is
written twice (English and Yorùbá) beside the arithmetic that draws it.
"""

from __future__ import annotations

from .core import Assignment, Choice, Drawn, MultipleChoice, Written, pick
from .faq_loop import LOOP

# The guide's FAQ questions, verbatim (as published: quizzes/tests/data/guide_faq.txt): its
# Yorùbá for 1, 2 and 4, its English for 3 and 5. The rest is ours: English for 1, 2 and 4 of
# the English edition, and Yorùbá for 3 and 5 of the Yorùbá edition (the self-check's words,
# gradacc_lessons/quiz/yoruba.py), so that the Yorùbá final is Yorùbá throughout.
GUIDE = {
    1: {"yo": "Kini ikojọpọ Gradient?", "en": "What is gradient accumulation?"},
    2: {
        "yo": "Kini ikojọpọ gradient nipataki jẹ ki o ṣe?",
        "en": "What does gradient accumulation mainly let you do?",
    },
    3: {
        "yo": "Tí iye ìkójọpọ̀ bá jẹ́ N, ìgbà wo ló yẹ kí optimizer.step() àti zero_grad() ṣẹlẹ̀?",
        "en": "With an accumulation factor N, when should optimizer.step() and zero_grad() occur?",
    },
    4: {
        "yo": "Eyi ti normalization Layer orisii diẹ mọ pẹlu gradient ikojọpọ?",
        "en": "Which normalization layer pairs more cleanly with gradient accumulation?",
    },
    5: {
        "yo": "Kí ló dé tí micro-batch mẹ́rin pẹ̀lú BatchNorm fi lè ṣiṣẹ́ yàtọ̀ sí batch gidi kan "
        "tí ìwọ̀n àpapọ̀ rẹ̀ jẹ́ ọ̀kan náà?",
        "en": "Why may four micro-batches with BatchNorm behave differently from one physical "
        "batch of the same total size?",
    },
}


# The headings that are the guide's own words in Yorùbá, shown as quotations (docs/yoruba.md).
QUOTED = {("yo", 1), ("yo", 2), ("yo", 4)}


def _faq(k: int, lang: str, question: str) -> str:
    heading = f"«{GUIDE[k][lang]}»" if (lang, k) in QUOTED else GUIDE[k][lang]
    return f"**FAQ {k}: {heading}**\n\n{question}"


def _numbers(values) -> str:
    return ", ".join(str(v) for v in values)


T1 = {
    "en": {
        "q": "`w.grad` is 0. The backward passes of {n} micro-batch losses (already scaled) give "
        "a weight `w` the gradients {g}, in this order, with no `zero_grad()` in between. What "
        "does `w.grad` hold after them?",
        "right": "backward() adds each micro-batch's gradient to what .grad holds: after the "
        "window it holds their sum, the gradient of the whole batch's loss.",
        "last": "backward() does not replace .grad, it adds to it: the earlier micro-batches' "
        "gradients are still there.",
        "mean": "backward() does not average, it adds. The mean comes from dividing each loss "
        "before backward, which was done already here.",
        "zero": "backward() neither updates the weights nor clears .grad; optimizer.step() "
        "updates and zero_grad() clears.",
    },
    "yo": {
        "q": "`w.grad` jẹ́ 0. Backward pass ti loss micro-batch {n} (tí a ti pín tẹ́lẹ̀) fún "
        "weight `w` ní gradient {g}, bí wọ́n ṣe tẹ̀léra, láìsí `zero_grad()` láàárín wọn. Kí "
        "ni `w.grad` ní lẹ́yìn wọn?",
        "right": "backward() máa ń fi gradient micro-batch kọ̀ọ̀kan kún ohun tí ó wà nínú .grad: "
        "lẹ́yìn fèrèsé, àpapọ̀ wọn ló wà níbẹ̀, ìyẹn gradient loss gbogbo batch.",
        "last": "backward() kò rọ́pò .grad, ó ń fi kún un ni: gradient àwọn micro-batch tí ó "
        "ṣáájú ṣì wà níbẹ̀.",
        "mean": "backward() kò ṣe àròpín, àròpọ̀ ló ń ṣe. Àròpín ń wá láti pípín loss kọ̀ọ̀kan "
        "ṣáájú backward, èyí tí a ti ṣe níbí.",
        "zero": "backward() kò yí weights padà, kò sì sọ .grad di òdo; optimizer.step() ló ń "
        "ṣe ìmúdójúìwọ̀n, zero_grad() ló ń sọ ọ́ di òdo.",
    },
}


def draw_sum(rng, lang="en") -> Drawn:
    """FAQ 1: what .grad holds after N backward passes."""
    while True:
        count = pick(rng, (3, 4, 5))
        grads = [round(rng.uniform(-3, 3), 1) for _ in range(count)]
        total, mean = round(sum(grads), 2), round(sum(grads) / count, 2)
        texts = {f"{total:.2f}", f"{grads[-1]:.2f}", f"{mean:.2f}", "0.00"}
        if len(texts) == 4 and 0 not in grads:
            break
    t = T1[lang]
    return Drawn(
        _faq(1, lang, t["q"].format(n=count, g=_numbers(grads))),
        Choice(f"{total:.2f}", t["right"]),
        (
            Choice(f"{grads[-1]:.2f}", t["last"]),
            Choice(f"{mean:.2f}", t["mean"]),
            Choice("0.00", t["zero"]),
        ),
    )


T2 = {
    "en": {
        "q": "The weights, their gradients and the optimizer's state need **{floor} MiB**; "
        "activations take "
        "**{a} MiB per sample**; the effective batch is **{batch}** samples and the memory "
        "budget **{budget} MiB**. With lesson 4's analytic model (floor + micro-batch × "
        "activations per sample), what is the smallest `accumulation_steps` among 1, 2, 4, 8, "
        "16, 32 and 64 that fits?",
        "right": "With N = {n}, a micro-batch of {micro_batch_size} samples peaks at {peak:g} "
        "MiB, within the budget; with N = {half} it would peak at {over:g} MiB.",
        "half": "With N = {half}, a micro-batch of {micro_batch_size_at_half} samples peaks at "
        "{over:g} MiB, above the budget of {budget} MiB.",
        "double": "N = {double} fits too, but with more, smaller micro-batches than needed: "
        "each one costs time.",
        "floor": "That fits the activations alone into the budget; the floor of weights, "
        "gradients and optimizer state comes on top.",
    },
    "yo": {
        "q": "Weights, gradient wọn àti ipò optimizer nílò **{floor} MiB**; activations ń gba "
        "**{a} MiB fún àpẹẹrẹ kọ̀ọ̀kan**; batch àpapọ̀ jẹ́ àpẹẹrẹ **{batch}**, memory tí ó wà "
        "sì jẹ́ **{budget} MiB**. Pẹ̀lú ìṣirò ẹ̀kọ́ 4 (ìpìlẹ̀ + micro-batch × activations fún "
        "àpẹẹrẹ kọ̀ọ̀kan), `accumulation_steps` wo ló kéré jù nínú 1, 2, 4, 8, 16, 32 àti 64 tí "
        "ó wọ inú memory?",
        "right": "Pẹ̀lú N = {n}, micro-batch àpẹẹrẹ {micro_batch_size} ga dé {peak:g} MiB, ó wọ "
        "inú memory; pẹ̀lú N = {half} yóò ga dé {over:g} MiB.",
        "half": "Pẹ̀lú N = {half}, micro-batch àpẹẹrẹ {micro_batch_size_at_half} ga dé {over:g} "
        "MiB, ó ju {budget} MiB tí ó wà lọ.",
        "double": "N = {double} náà wọ inú memory, ṣùgbọ́n micro-batch rẹ̀ pọ̀ ju bí ó ti yẹ lọ, "
        "wọ́n sì kéré jù: ọ̀kọ̀ọ̀kan ń gba àkókò.",
        "floor": "Ìyẹn mú kí activations nìkan wọ inú memory; ìpìlẹ̀ weights, gradient àti ipò "
        "optimizer ṣì wà lórí rẹ̀.",
    },
}


def draw_fit(rng, lang="en") -> Drawn:
    """FAQ 2: the smallest N whose window fits a memory budget."""
    while True:
        floor, a = pick(rng, range(400, 1600, 100)), pick(rng, (1.0, 1.5, 2.0, 3.0, 4.0))
        batch, n = pick(rng, (256, 512)), pick(rng, (4, 8, 16))

        def peak(n, floor=floor, batch=batch, a=a):
            return floor + batch // n * a

        budget = int(pick(rng, range(int(peak(n)) + 1, int(peak(n // 2)))))
        alone = next(s for s in (1, 2, 4, 8, 16, 32, 64) if batch // s * a <= budget)
        wrong_floor = alone if alone not in (n, n // 2, n * 2) else n * 4
        if len({n, n // 2, n * 2, wrong_floor}) == 4:
            break
    t = T2[lang]
    values = {
        "n": n,
        "micro_batch_size": batch // n,
        "peak": peak(n),
        "half": n // 2,
        "over": peak(n // 2),
        "micro_batch_size_at_half": batch // (n // 2),
        "budget": budget,
        "double": n * 2,
    }
    return Drawn(
        _faq(2, lang, t["q"].format(floor=floor, a=a, batch=batch, budget=budget)),
        Choice(str(n), t["right"].format(**values)),
        (
            Choice(str(n // 2), t["half"].format(**values)),
            Choice(str(n * 2), t["double"].format(**values)),
            Choice(str(wrong_floor), t["floor"]),
        ),
    )


T3 = {
    "en": {
        "q": "Take `accumulation_steps = {n}` and **{m}** micro-batches (so the last window is "
        "shorter). How many times does a correct loop call `optimizer.step()`, and how many "
        "times `optimizer.zero_grad()`?",
        "answer": "{steps} steps, {clears} clears",
        "right": "One step per window of N, after its last micro-batch, the shorter last "
        "window included; a clear right after each step, and one before the first micro-batch.",
        "nolast": "That drops the last, shorter window: its gradients are computed and then "
        "thrown away (or leak into the next epoch).",
        "nofirst": "That leaves out the clear before the first micro-batch: leftover gradients "
        "from earlier work would join the first step.",
        "every": "A step after every micro-batch is training with small batches: the window's "
        "gradients never add up.",
        "inside": "Clearing after every micro-batch throws away the gradients the window is "
        "adding up: only the last micro-batch would count.",
    },
    "yo": {
        "q": "Jẹ́ kí `accumulation_steps = {n}`, kí iye micro-batch sì jẹ́ **{m}** (nítorí náà "
        "fèrèsé tó kẹ́yìn kúrú). Ìgbà mélòó ni loop tí ó tọ̀nà ń pe `optimizer.step()`, ìgbà "
        "mélòó ló sì ń pe `optimizer.zero_grad()`?",
        "answer": "step() ní ìgbà {steps}, zero_grad() ní ìgbà {clears}",
        "right": "Ìmúdójúìwọ̀n kan fún fèrèsé N kọ̀ọ̀kan, lẹ́yìn micro-batch tó kẹ́yìn rẹ̀, títí "
        "kan fèrèsé tó kẹ́yìn tí ó kúrú; zero_grad() kan lẹ́yìn ìmúdójúìwọ̀n kọ̀ọ̀kan, àti "
        "ọ̀kan ṣáájú micro-batch àkọ́kọ́.",
        "nolast": "Ìyẹn fi fèrèsé tó kẹ́yìn tí ó kúrú sílẹ̀: a ṣírò gradient rẹ̀, a sì sọ ọ́ nù "
        "(tàbí kí ó wọ epoch tó kàn).",
        "nofirst": "Ìyẹn fi zero_grad() ṣáájú micro-batch àkọ́kọ́ sílẹ̀: gradient tí ó kù láti "
        "iṣẹ́ àtẹ̀yìnwá yóò wọ ìmúdójúìwọ̀n àkọ́kọ́.",
        "every": "Ìmúdójúìwọ̀n lẹ́yìn micro-batch kọ̀ọ̀kan jẹ́ training pẹ̀lú batch kékeré: "
        "gradient fèrèsé kò kó jọ rárá.",
        "inside": "Sísọ gradient di òdo lẹ́yìn micro-batch kọ̀ọ̀kan ń sọ gradient tí fèrèsé ń kó "
        "jọ nù: micro-batch tó kẹ́yìn nìkan ni yóò kà.",
    },
}


def draw_step_times(rng, lang="en") -> Drawn:
    """FAQ 3: how often a correct loop steps and clears."""
    n = pick(rng, (3, 4, 5))
    m = pick(rng, [c for c in range(2 * n + 1, 4 * n) if c % n])
    windows = -(-m // n)
    t = T3[lang]

    def counts(steps: int, clears: int, why: str) -> Choice:
        return Choice(t["answer"].format(steps=steps, clears=clears), t[why])

    return Drawn(
        _faq(3, lang, t["q"].format(n=n, m=m)),
        counts(windows, windows + 1, "right"),
        (
            counts(windows - 1, windows, "nolast"),
            counts(windows, windows, "nofirst"),
            counts(m, m + 1, "every"),
            counts(windows, m + 1, "inside"),
        ),
    )


PER_SAMPLE = {"`nn.GroupNorm(4, 32)`": "group", "`nn.LayerNorm(32, eps=1e-6)`": "layer"}
BATCH_NORMS = (
    "`nn.BatchNorm1d(32)`",
    "`nn.BatchNorm1d(32, momentum=0.01)`",
    "`nn.BatchNorm1d(32, affine=False)`",
    "`nn.SyncBatchNorm(32)`",
)
T4 = {
    "en": {
        "q": "Which of these layers, in a network trained in `train()` mode with 4 accumulated "
        "micro-batches per step, keeps the gradients equal to those of one batch of all their "
        "samples?",
        "group": "GroupNorm computes its statistics inside each sample, over groups of "
        "channels: how the batch is split cannot change them.",
        "layer": "LayerNorm computes its statistics inside each sample: how the batch is split "
        "cannot change them.",
        "`nn.BatchNorm1d(32)`": "In train mode BatchNorm normalises each micro-batch with that "
        "micro-batch's mean and variance, not the whole batch's.",
        "`nn.BatchNorm1d(32, momentum=0.01)`": "The momentum only affects the running "
        "statistics; in train mode each micro-batch is still normalised with its own.",
        "`nn.BatchNorm1d(32, affine=False)`": "Without its scale and shift it still normalises "
        "each micro-batch with that micro-batch's own mean and variance.",
        "`nn.SyncBatchNorm(32)`": "SyncBatchNorm shares statistics across processes, not "
        "across the micro-batches of one process, which are normalised one by one.",
    },
    "yo": {
        "q": "Èwo nínú àwọn layer wọ̀nyí, nínú model tí a ń kọ́ ní ipò `train()` pẹ̀lú "
        "micro-batch 4 tí a kó jọ fún ìmúdójúìwọ̀n kọ̀ọ̀kan, ló ń jẹ́ kí gradient dọ́gba pẹ̀lú "
        "ti batch kan tí ó ní gbogbo àpẹẹrẹ wọn?",
        "group": "GroupNorm ń ṣírò statistics rẹ̀ nínú àpẹẹrẹ kọ̀ọ̀kan, lórí àwọn ẹgbẹ́ channel: "
        "bí a ṣe pín batch kò lè yí wọn padà.",
        "layer": "LayerNorm ń ṣírò statistics rẹ̀ nínú àpẹẹrẹ kọ̀ọ̀kan: bí a ṣe pín batch kò "
        "lè yí wọn padà.",
        "`nn.BatchNorm1d(32)`": "Ní ipò train, BatchNorm ń ṣe normalization micro-batch "
        "kọ̀ọ̀kan pẹ̀lú mean àti variance ti micro-batch náà, kì í ṣe ti gbogbo batch.",
        "`nn.BatchNorm1d(32, momentum=0.01)`": "Momentum kan running statistics nìkan ni; ní "
        "ipò train, micro-batch kọ̀ọ̀kan ṣì ń lo statistics tirẹ̀.",
        "`nn.BatchNorm1d(32, affine=False)`": "Láìsí `affine`, ó ṣì ń ṣe normalization "
        "micro-batch kọ̀ọ̀kan pẹ̀lú mean àti variance ti micro-batch náà fúnra rẹ̀.",
        "`nn.SyncBatchNorm(32)`": "SyncBatchNorm ń pín statistics láàárín àwọn process, kì í "
        "ṣe láàárín àwọn micro-batch ti process kan, tí a ń ṣe normalization wọn lọ́kọ̀ọ̀kan.",
    },
}


def draw_norm(rng, lang="en") -> Drawn:
    """FAQ 4: the layer that keeps accumulation exact."""
    layer = pick(rng, PER_SAMPLE)
    t = T4[lang]
    return Drawn(
        _faq(4, lang, t["q"]),
        Choice(layer, t[PER_SAMPLE[layer]]),
        tuple(Choice(w, t[w]) for w in BATCH_NORMS),
    )


T5 = {
    "en": {
        "q": "A `BatchNorm1d` layer in `train()` mode gets 4 micro-batches of 8 samples. For "
        "one of its features, the micro-batches' means are {means}; its running mean is "
        "{running}. Which mean does the layer subtract from that feature for the samples of "
        "micro-batch **{k}**?",
        "right": "In train mode each micro-batch is normalised with its own mean: the forward "
        "pass depends on which samples share it, so it is not the full batch's.",
        "batch": "That is the mean of all 32 samples, which one physical batch would subtract. "
        "That they differ is why accumulation cannot match it.",
        "running": "The running mean is used in eval mode; in train mode BatchNorm uses the "
        "statistics of the batch it sees, here the micro-batch.",
        "other": "That is another micro-batch's mean: each micro-batch is normalised with its "
        "own statistics only.",
    },
    "yo": {
        "q": "Layer `BatchNorm1d` kan ní ipò `train()` gba micro-batch 4, àpẹẹrẹ 8 nínú "
        "ọ̀kọ̀ọ̀kan. Fún feature kan rẹ̀, mean àwọn micro-batch jẹ́ {means}; running mean rẹ̀ "
        "jẹ́ {running}. Mean wo ni layer náà ń yọ kúrò nínú feature yẹn fún àwọn àpẹẹrẹ "
        "micro-batch **{k}**?",
        "right": "Ní ipò train, a ń ṣe normalization micro-batch kọ̀ọ̀kan pẹ̀lú mean tirẹ̀: "
        "forward pass gbára lé àwọn àpẹẹrẹ tí ó jọ wà nínú rẹ̀, nítorí náà kì í ṣe ti gbogbo "
        "batch.",
        "batch": "Ìyẹn ni mean gbogbo àpẹẹrẹ 32, èyí tí batch gidi kan ṣoṣo yóò yọ kúrò. "
        "Ìyàtọ̀ wọn ni ìdí tí ìkójọpọ̀ kò fi lè bá a mu.",
        "running": "Ní ipò eval ni a ń lo running mean; ní ipò train, BatchNorm ń lo statistics "
        "batch tí ó rí, èyí tí í ṣe micro-batch náà níbí.",
        "other": "Ìyẹn ni mean micro-batch mìíràn: a ń ṣe normalization micro-batch kọ̀ọ̀kan "
        "pẹ̀lú statistics tirẹ̀ nìkan.",
    },
}


def draw_subtracted_mean(rng, lang="en") -> Drawn:
    """FAQ 5: the mean BatchNorm subtracts in a micro-batch."""
    while True:
        means = [round(rng.uniform(-1.5, 2.5), 2) for _ in range(4)]
        running = round(rng.uniform(-0.5, 0.5), 2)
        k = rng.randrange(4)
        other = (k + 1 + rng.randrange(3)) % 4
        batch = round(sum(means) / 4, 2)
        texts = {f"{means[k]:.2f}", f"{batch:.2f}", f"{running:.2f}", f"{means[other]:.2f}"}
        if len(texts) == 4:
            break
    t = T5[lang]
    return Drawn(
        _faq(
            5,
            lang,
            t["q"].format(
                means=_numbers(f"{m:.2f}" for m in means), running=f"{running:.2f}", k=k + 1
            ),
        ),
        Choice(f"{means[k]:.2f}", t["right"]),
        (
            Choice(f"{batch:.2f}", t["batch"]),
            Choice(f"{running:.2f}", t["running"]),
            Choice(f"{means[other]:.2f}", t["other"]),
        ),
    )


WRITTEN = Written(
    id="faq5_written",
    goal="why BatchNorm breaks accumulation, in words",
    prompt={
        "en": "### FAQ 5, in your own words ({points} points, graded by hand)\n\nIn the cell "
        "below, explain in three to five sentences why four micro-batches through a model with "
        "BatchNorm give different gradients from one batch of the same total size, even when "
        "every loss is weighted correctly, and name one way to make accumulation match the full "
        "batch.",
        "yo": "### FAQ 5, ní ọ̀rọ̀ ara rẹ ({points} máàkì, olùkọ́ ni yóò máàkì rẹ̀)\n\nNínú "
        "sẹ́ẹ̀lì nísàlẹ̀, ṣàlàyé ní gbólóhùn mẹ́ta sí márùn-ún ìdí tí micro-batch mẹ́rin nínú "
        "model tí ó ní BatchNorm fi ń fúnni ní gradient tí ó yàtọ̀ sí ti batch kan tí ìwọ̀n "
        "àpapọ̀ rẹ̀ jẹ́ ọ̀kan náà, bí a tilẹ̀ pín loss kọ̀ọ̀kan bí ó ti yẹ, kí o sì dárúkọ ọ̀nà "
        "kan tí ìkójọpọ̀ fi lè bá batch kíkún mu.",
    },
    model_answer=(
        "In training mode BatchNorm normalises each micro-batch with the mean and variance of "
        "that micro-batch alone, so the forward pass (activations, loss) is not the full batch's, "
        "and no weighting of the losses can make the gradients match. Layers that normalise each "
        "sample on its own (GroupNorm, LayerNorm) or BatchNorm in eval mode (frozen statistics) "
        "make accumulation match exactly; micro-batches large enough that their statistics are "
        "close to the batch's (16 to 32 samples trained about as well in lesson 3) bring it close."
    ),
    rubric=(
        "1 point: BatchNorm's statistics (mean and variance) are computed per micro-batch in "
        "training mode, so the forward computation itself differs from the full batch (the "
        "outputs/loss differ, not only the bookkeeping of the gradients); saying that therefore "
        "no loss scaling can fix it belongs to this point.",
        "1 point: one remedy that makes the gradients match or nearly match: per-sample "
        "normalisation (GroupNorm, LayerNorm), BatchNorm frozen or in eval mode, or larger "
        "micro-batches to shrink the gap.",
        '0 points for: "the loss was not divided by N", "float32 rounding", or "momentum" '
        "as the cause; a compensated momentum fixes the running statistics, not the gradients, "
        "so it is no remedy here.",
        "Mentioning that the running statistics get four momentum updates instead of one is "
        "correct but not required; it earns no extra point.",
    ),
)

FAQ = Assignment(
    name="gradacc_faq",
    lesson="final",
    title={
        "en": "Final quiz: the gradient accumulation FAQ",
        "yo": "Ìdánwò ìkẹyìn: àwọn ìbéèrè tí a máa ń béèrè nípa ìkójọpọ̀ gradient",
    },
    intro={
        "en": "One question per item of the FAQ, in the FAQ's order, each asking you to work "
        "something out; a coding exercise on FAQ 3 and a written answer on FAQ 5, graded by hand.",
        "yo": "Ìbéèrè kan fún ohun kọ̀ọ̀kan nínú FAQ, ní títẹ̀lé FAQ, ọ̀kọ̀ọ̀kan ń béèrè pé kí o "
        "ṣírò nǹkan; iṣẹ́ kóòdù kan lórí FAQ 3 àti ìdáhùn kíkọ kan lórí FAQ 5, tí olùkọ́ yóò "
        "máàkì.",
    },
    items=(
        MultipleChoice("faq1", "compute", "what .grad holds after N backward passes", draw_sum),
        MultipleChoice("faq2", "compute", "the smallest N that fits a budget", draw_fit),
        MultipleChoice("faq3", "compute", "when a correct loop steps", draw_step_times),
        LOOP,
        MultipleChoice("faq4", "recall", "the layer that keeps accumulation exact", draw_norm),
        MultipleChoice("faq5", "compute", "the mean BatchNorm subtracts", draw_subtracted_mean),
        WRITTEN,
    ),
    languages=("en", "yo"),
)
