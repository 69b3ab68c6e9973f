"""Lesson 7's self-check: accumulation in the frameworks."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Prediction, Question
from gradacc_lessons.quiz.yoruba import Wording

LESSON7 = (
    Question(
        id="l7_tail_window",
        lesson=7,
        prompt=(
            "An epoch has 10 micro-batches and Accelerate's accumulate() runs with "
            "gradient_accumulation_steps=4. What happens to the last two micro-batches?"
        ),
        choices=(
            "They are dropped: the optimizer steps only twice in the epoch",
            "A third step, each loss still divided by 4: half the full batch's step",
            "A third step, exactly the step one batch of those two would give",
            "They stay in .grad and join the next epoch's first window of four",
        ),
        answer=1,
        explanation=(
            "Accelerate (like Lightning) steps at the end of the dataloader, but "
            "accelerator.backward divides every loss by N. Weigh each micro-batch by its share "
            "of the window, times N, to get the full batch's step."
        ),
        hint="accelerator.backward divides by the N you configured, whatever the window holds.",
    ),
    Question(
        id="l7_trainer_tokens",
        lesson=7,
        prompt=(
            "The Trainer accumulates a causal language model's loss over padded sequences. "
            "Which count should num_items_in_batch hold for the update to match one big batch?"
        ),
        choices=(
            "Its micro-batches: each loss is already a mean over its tokens",
            "Its sequences, since each sequence is one sample of the batch",
            "Its labels that are not -100, counted before the shift",
            "Its labels that are not -100, after the shift by one",
        ),
        answer=3,
        explanation=(
            "The model predicts token t + 1 from tokens up to t, so a sequence of n real tokens "
            "gives n - 1 predictions. Counting before the shift adds one token per sequence: "
            "GPT2LMHeadModel in this lesson came out a few percent short until its loss_type "
            "was set to ForCausalLM."
        ),
        hint="Count what the loss averages over: position t is compared with label t + 1.",
    ),
    Question(
        id="l7_logged_loss",
        lesson=7,
        prompt=(
            'A Lightning module logs self.log("loss", loss) in training_step, with '
            "accumulate_grad_batches=4. What does the logger receive at each optimizer step?"
        ),
        choices=(
            "The loss of the last micro-batch of the window",
            "The loss of the whole window, as the Trainer logs it",
            "The sum of the window's four micro-batch losses",
            "The loss of the whole window divided by 4",
        ),
        answer=0,
        explanation=(
            "Lightning logs the value training_step passed to self.log, from the latest "
            "micro-batch. The Trainer logs the window's loss; an Accelerate loop holds the last "
            "micro-batch's loss."
        ),
        hint="What was the value of `loss` in the last training_step before the step?",
    ),
    Question(
        id="l7_scheduler_length",
        lesson=7,
        prompt=(
            "With Accelerate on one process, 1,000 micro-batches per epoch and "
            "gradient_accumulation_steps=4, how many steps should a linear schedule for one "
            "epoch be sized for?"
        ),
        choices=(
            "1,000: one scheduler step per micro-batch",
            "250: one scheduler step per optimizer step",
            "4: one per accumulation step of a window",
            "4,000: len(dataloader) times gradient_accumulation_steps",
        ),
        answer=1,
        explanation=(
            "The prepared scheduler advances only when the optimizer really steps: once per "
            "window, 1,000 / 4 = 250 times. Sized for len(dataloader) = 1,000 it is a quarter "
            "done when the epoch ends. On W processes it advances W times per optimizer step "
            "(unless its DataLoaderConfiguration says split_batches=True): size it W times "
            "longer."
        ),
        hint="Count optimizer steps, not micro-batches.",
    ),
    Question(
        id="l7_clipping",
        lesson=7,
        prompt=(
            "You call accelerator.clip_grad_norm_(model.parameters(), 1.0) after every "
            "accelerator.backward(loss), inside accumulate(). What goes wrong?"
        ),
        choices=(
            "Nothing: Accelerate skips the call until the window's last micro-batch",
            "Accelerate raises an error when clipping inside accumulate()",
            "Each call clips a partial sum: not the full batch's clipped step",
            "The gradient is clipped twice at the end of every window",
        ),
        answer=2,
        explanation=(
            "clip_grad_norm_ clips whatever .grad holds when it is called. Guard it with "
            "`if accelerator.sync_gradients:` so that it clips the summed gradient once per "
            "window, as the Trainer and Lightning do."
        ),
        hint="Does clip_grad_norm_ know that the window is not finished yet?",
    ),
    Question(
        id="l7_deepspeed_scaling",
        lesson=7,
        prompt=(
            "Under DeepSpeed with gradient_accumulation_steps=8, a loop does "
            "engine.backward(loss / 8) and engine.step() after every micro-batch. What is wrong?"
        ),
        choices=(
            "engine.step() belongs after the window's last micro-batch only",
            "Nothing: this is the loop DeepSpeed's documentation shows",
            "The loss must be multiplied by 8, not divided by it",
            "The loss is divided by 8 twice: every update is 8x too small",
        ),
        answer=3,
        explanation=(
            "engine.backward scales the loss by 1/gradient_accumulation_steps itself, and "
            "engine.step() is meant to be called after every micro-batch: the engine only "
            "steps at window boundaries."
        ),
        hint="Which of the two calls already knows N?",
    ),
    Prediction(
        id="l7_predict_gpt2_count",
        lesson=7,
        prompt=(
            "Lesson 7's second window of padded lines holds 8 lines and 360 next-token "
            "targets. How many items does the Trainer divide its loss by for GPT2LMHeadModel?"
        ),
        value=368,
        tolerance=0,
        computation=(
            "from gradacc_lessons.demos import frameworks\n\n"
            "text = frameworks.zen_of_python()\n"
            "vocabulary = frameworks.make_vocabulary(text)\n"
            "ids, labels = frameworks.make_padded_lines(text, vocabulary, count=16)\n"
            "lines = frameworks.Recipe(ids, labels, micro_batch_size=2, accumulation_steps=4)\n"
            "lines.window_labels()[1]"
        ),
        hint="For GPT-2 the Trainer counts the labels before the shift by one position.",
        explanation=(
            "Unshifted, every line keeps its first label too: 360 targets + 1 per line x 8 "
            "lines = 368, so each update of that window is 360/368 of the full batch's."
        ),
    ),
)

# The same questions in Yorùbá (docs/yoruba.md), the choices in the order above.
LESSON7_YORUBA: dict[str, Wording] = {
    "l7_tail_window": Wording(
        prompt=(
            "Epoch kan ní micro-batch 10, accumulate() ti Accelerate sì ń ṣiṣẹ́ pẹ̀lú "
            "gradient_accumulation_steps=4. Kí ló ń ṣẹlẹ̀ sí micro-batch méjì tó kẹ́yìn?"
        ),
        choices=(
            "A sọ wọ́n nù: optimizer ń ṣe ìmúdójúìwọ̀n lẹ́ẹ̀mejì péré nínú epoch",
            "Ìmúdójúìwọ̀n kẹta, loss kọ̀ọ̀kan ṣì pín sí 4: ìdajì ìmúdójúìwọ̀n gbogbo batch",
            "Ìmúdójúìwọ̀n kẹta, gẹ́lẹ́ bí ti batch kan tí ó ní méjèèjì",
            "Wọ́n dúró nínú .grad, wọ́n sì ń darapọ̀ mọ́ fèrèsé àkọ́kọ́ epoch tó kàn",
        ),
        hint="accelerator.backward ń pín sí N tí o ṣètò, ohun yòówù tí fèrèsé ní.",
        explanation=(
            "Accelerate (bíi Lightning) ń ṣe ìmúdójúìwọ̀n ní òpin dataloader, ṣùgbọ́n "
            "accelerator.backward ń pín gbogbo loss sí N. Fún micro-batch kọ̀ọ̀kan ní ipa ìpín "
            "rẹ̀ nínú fèrèsé, lọ́nà N, kí o lè rí ìmúdójúìwọ̀n gbogbo batch."
        ),
    ),
    "l7_trainer_tokens": Wording(
        prompt=(
            "Trainer ń kó loss causal language model jọ lórí àwọn sequence tí a fi padding kún. "
            "Iye wo ni num_items_in_batch gbọ́dọ̀ ní kí ìmúdójúìwọ̀n lè dọ́gba pẹ̀lú ti batch "
            "ńlá kan?"
        ),
        choices=(
            "Àwọn micro-batch rẹ̀: loss kọ̀ọ̀kan ti jẹ́ àròpín lórí token rẹ̀ tẹ́lẹ̀",
            "Àwọn sequence rẹ̀, nítorí sequence kọ̀ọ̀kan jẹ́ àpẹẹrẹ kan nínú batch",
            "Àwọn label rẹ̀ tí kì í ṣe -100, tí a kà ṣáájú kí a tó sún wọn",
            "Àwọn label rẹ̀ tí kì í ṣe -100, lẹ́yìn tí a ti sún wọn ní ipò kan",
        ),
        hint="Ka ohun tí loss ń ṣe àròpín lé lórí: a ń fi ipò t wé label t + 1.",
        explanation=(
            "Model ń sọ token t + 1 tẹ́lẹ̀ láti inú àwọn token títí dé t, nítorí náà sequence "
            "tí ó ní token gidi n ń fún ni ní àsọtẹ́lẹ̀ n - 1. Kíkà ṣáájú sísún ń fi token kan "
            "kún sequence kọ̀ọ̀kan: GPT2LMHeadModel nínú ẹ̀kọ́ yìí kù díẹ̀ ní ìdá díẹ̀ nínú "
            "ọgọ́rùn-ún títí a fi ṣètò loss_type rẹ̀ sí ForCausalLM."
        ),
    ),
    "l7_logged_loss": Wording(
        prompt=(
            'Module Lightning kan ń kọ self.log("loss", loss) sínú training_step, pẹ̀lú '
            "accumulate_grad_batches=4. Kí ni logger ń gbà ní ìmúdójúìwọ̀n optimizer kọ̀ọ̀kan?"
        ),
        choices=(
            "Loss micro-batch tó kẹ́yìn nínú fèrèsé",
            "Loss gbogbo fèrèsé, bí Trainer ṣe ń kọ ọ́",
            "Àpapọ̀ loss micro-batch mẹ́rin ti fèrèsé",
            "Loss gbogbo fèrèsé tí a pín sí 4",
        ),
        hint="Kí ni iye `loss` ní training_step tó kẹ́yìn ṣáájú ìmúdójúìwọ̀n?",
        explanation=(
            "Lightning ń kọ iye tí training_step fi fún self.log, láti inú micro-batch tó kẹ́yìn. "
            "Trainer ń kọ loss fèrèsé; loop Accelerate ń gbé loss micro-batch tó kẹ́yìn."
        ),
    ),
    "l7_scheduler_length": Wording(
        prompt=(
            "Pẹ̀lú Accelerate lórí process kan, micro-batch 1,000 ní epoch kọ̀ọ̀kan àti "
            "gradient_accumulation_steps=4, step mélòó ni ó yẹ kí schedule linear fún epoch kan "
            "ní?"
        ),
        choices=(
            "1,000: step scheduler kan fún micro-batch kọ̀ọ̀kan",
            "250: step scheduler kan fún ìmúdójúìwọ̀n optimizer kọ̀ọ̀kan",
            "4: ọ̀kan fún micro-batch kọ̀ọ̀kan nínú fèrèsé",
            "4,000: len(dataloader) lọ́nà gradient_accumulation_steps",
        ),
        hint="Ka ìmúdójúìwọ̀n optimizer, kì í ṣe micro-batch.",
        explanation=(
            "Scheduler tí a ti pèsè ń lọ síwájú nígbà tí optimizer bá ṣe ìmúdójúìwọ̀n gan-an "
            "nìkan: lẹ́ẹ̀kan ní fèrèsé kọ̀ọ̀kan, 1,000 / 4 = 250 ìgbà. Tí a bá ṣètò rẹ̀ fún "
            "len(dataloader) = 1,000, ìdá mẹ́rin rẹ̀ péré ló ti parí nígbà tí epoch bá parí. "
            "Lórí process W, ó ń lọ síwájú ní ìgbà W fún ìmúdójúìwọ̀n kọ̀ọ̀kan (àfi tí "
            "split_batches=True): ṣètò rẹ̀ ní ìlọ́po W."
        ),
    ),
    "l7_clipping": Wording(
        prompt=(
            "O ń pe accelerator.clip_grad_norm_(model.parameters(), 1.0) lẹ́yìn "
            "accelerator.backward(loss) kọ̀ọ̀kan, nínú accumulate(). Kí ló ń ṣàṣìṣe?"
        ),
        choices=(
            "Kò sí nǹkan kan: Accelerate ń fo ìpè náà títí dé micro-batch tó kẹ́yìn fèrèsé",
            "Accelerate ń ju àṣìṣe tí a bá ṣe clipping nínú accumulate()",
            "Ìpè kọ̀ọ̀kan ń ṣe clipping apá kan àpapọ̀: kì í ṣe ìmúdójúìwọ̀n gbogbo batch",
            "A ń ṣe clipping gradient lẹ́ẹ̀mejì ní òpin fèrèsé kọ̀ọ̀kan",
        ),
        hint="Ṣé clip_grad_norm_ mọ̀ pé fèrèsé kò tíì parí?",
        explanation=(
            "clip_grad_norm_ ń ṣe clipping ohunkóhun tí .grad ní nígbà tí a pè é. Dáàbò bò ó "
            "pẹ̀lú `if accelerator.sync_gradients:` kí ó lè ṣe clipping àpapọ̀ gradient lẹ́ẹ̀kan "
            "ní fèrèsé kọ̀ọ̀kan, bí Trainer àti Lightning ṣe ń ṣe."
        ),
    ),
    "l7_deepspeed_scaling": Wording(
        prompt=(
            "Lábẹ́ DeepSpeed pẹ̀lú gradient_accumulation_steps=8, loop kan ń ṣe "
            "engine.backward(loss / 8) àti engine.step() lẹ́yìn micro-batch kọ̀ọ̀kan. Kí ló "
            "ṣàṣìṣe?"
        ),
        choices=(
            "engine.step() wà fún ẹ̀yìn micro-batch tó kẹ́yìn fèrèsé nìkan",
            "Kò sí nǹkan kan: loop tí ìwé DeepSpeed fi hàn nìyí",
            "A gbọ́dọ̀ fi 8 sọ loss di púpọ̀, kì í ṣe pín in sí 8",
            "A pín loss sí 8 lẹ́ẹ̀mejì: ìmúdójúìwọ̀n kọ̀ọ̀kan kéré ní ìlọ́po 8",
        ),
        hint="Èwo nínú ìpè méjèèjì ló ti mọ N tẹ́lẹ̀?",
        explanation=(
            "engine.backward fúnra rẹ̀ ń pín loss sí gradient_accumulation_steps, a sì gbọ́dọ̀ "
            "pe engine.step() lẹ́yìn micro-batch kọ̀ọ̀kan: engine náà ń ṣe ìmúdójúìwọ̀n ní ààlà "
            "fèrèsé nìkan."
        ),
    ),
    "l7_predict_gpt2_count": Wording.prediction(
        "Fèrèsé kejì ẹ̀kọ́ 7 tí ó ní ìlà tí a fi padding kún ní ìlà 8 àti target token-tó-kàn "
        "360. Item mélòó ni Trainer ń pín loss rẹ̀ sí fún GPT2LMHeadModel?",
        "Fún GPT-2, Trainer ń ka àwọn label ṣáájú kí a tó sún wọn ní ipò kan.",
        "Láìsí sísún, ìlà kọ̀ọ̀kan ṣì ní label àkọ́kọ́ rẹ̀: target 360 + 1 fún ìlà kọ̀ọ̀kan x "
        "ìlà 8 = 368, nítorí náà ìmúdójúìwọ̀n kọ̀ọ̀kan fèrèsé yẹn jẹ́ 360/368 ti gbogbo batch.",
    ),
}
