"""The question bank: one source of truth for the course's self-check questions.

Two kinds of question:

- `Question`: multiple choice with one right choice;
- `Prediction`: type in a number that the lesson's package computes, right within a stated
  tolerance; after the check the quiz shows the computation (`computation`: code that calls
  the lesson's function, and that the tests run to make sure it gives `value`).

Both carry a `hint`, shown after a first wrong answer, before the answer itself, and an
`explanation`, shown with the answer. The self-check at the end of each lesson asks
`questions_for(lesson)`; the self-study quiz asks `self_study_questions()`. The Yoruba text
of the five FAQ questions is in `yoruba.py`. The choices are stored in any order: the quiz
draws a fresh order each time (`selfcheck.draw`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

LETTERS = "ABCDEFGH"


@dataclass(frozen=True)
class Question:
    """A multiple-choice question with one right answer, a hint and the explanation shown after."""

    id: str  # stable and unique: names the widget's CSS class and the Yoruba text
    lesson: int  # the lesson whose self-check asks it
    prompt: str
    choices: tuple[str, ...]
    answer: int  # index of the right choice in `choices`
    explanation: str  # shown with the answer
    faq: int | None = None  # position of the FAQ item it asks (1-5), if any
    # After a first wrong answer: points at the idea, not at the answer. Every question of the
    # bank has one (a test checks); the default keeps older positional calls working.
    hint: str = ""

    @property
    def letter(self) -> str:
        """The right choice as a letter, A for the first choice."""
        return LETTERS[self.answer]


@dataclass(frozen=True)
class Prediction:
    """Predict a number the lesson's package computes; right within `tolerance` of `value`."""

    id: str
    lesson: int
    prompt: str  # says the unit the number is typed in
    value: float  # what `computation` gives
    tolerance: float  # |typed - value| <= tolerance counts as right
    computation: str  # Python code, shown after the check; its last line gives `value`
    explanation: str  # the same number by hand
    hint: str
    faq: int | None = None


AnyQuestion = Question | Prediction

QUESTIONS: tuple[AnyQuestion, ...] = (
    # --- the FAQ of the course's source guide, in its order ---
    Question(
        id="faq1_what",
        lesson=1,
        faq=1,
        prompt="What is gradient accumulation?",
        choices=(
            "Averaging the weights of several models, each trained on a part of the data",
            "Raising the learning rate step by step while the batch size grows",
            "Adding up the gradients of several micro-batches, then making one update",
            "Keeping a running mean of the loss over the last few micro-batches",
        ),
        answer=2,
        hint="Think of what backward() does to a .grad that nobody has cleared.",
        explanation=(
            "backward() adds each micro-batch's gradient to the .grad buffers; after N "
            "micro-batches one optimizer step uses their sum, the gradient of one large batch, "
            "while memory holds one micro-batch at a time."
        ),
    ),
    Question(
        id="faq2_purpose",
        lesson=1,
        faq=2,
        prompt="What does gradient accumulation mainly let you do?",
        choices=(
            "Train with a large batch while memory holds only a small one",
            "Train faster than with the whole batch held in memory at once",
            "Reach the same accuracy with fewer parameters in the model",
            "Skip the backward pass for most of the micro-batches",
        ),
        answer=0,
        hint="What grows with the batch in training: the parameters, or what backward needs?",
        explanation=(
            "Activations are kept for one micro-batch at a time, so peak memory follows the "
            "micro-batch while the update follows the effective batch. It buys memory, not speed."
        ),
    ),
    Question(
        id="faq3_when_step",
        lesson=1,
        faq=3,
        prompt=(
            "With an accumulation factor N, when should optimizer.step() and zero_grad() occur?"
        ),
        choices=(
            "Both after every micro-batch, so that each update only sees fresh gradients",
            "step() after every micro-batch, zero_grad() once after each window of N",
            "zero_grad() after every micro-batch, step() once after each window of N",
            "step() and then zero_grad() once per window, after its N-th micro-batch",
        ),
        answer=3,
        hint="Which of the two calls would throw away gradients that are still being added up?",
        explanation=(
            "Clearing inside a window throws away the gradients being added up; stepping inside "
            "it updates on a part of the batch. Start with cleared gradients, step once per "
            "window of N micro-batches, and clear right after the step."
        ),
    ),
    Question(
        id="faq4_norm_layers",
        lesson=3,
        faq=4,
        prompt="Which normalisation layers pair cleanly with gradient accumulation?",
        choices=(
            "BatchNorm, because it normalises over all the samples of the batch",
            "LayerNorm and GroupNorm, as they normalise each sample on its own",
            "Any normalisation layer, provided that each loss is divided by N",
            "None of them: every normalisation layer breaks the equivalence",
        ),
        answer=1,
        hint="Does one sample's output depend on the other samples of its micro-batch?",
        explanation=(
            "LayerNorm and GroupNorm compute their statistics inside each sample, so splitting "
            "the batch changes nothing; BatchNorm's statistics depend on which samples share "
            "the micro-batch."
        ),
    ),
    Question(
        id="faq5_batchnorm",
        lesson=3,
        faq=5,
        prompt=(
            "Why may four micro-batches with BatchNorm behave differently from one physical "
            "batch of the same total size?"
        ),
        choices=(
            "The loss of each of the four micro-batches was not divided by four",
            "Rounding errors of float32 add up over the four backward passes",
            "Each micro-batch is normalised with its own mean and variance",
            "The optimizer's momentum is updated four times instead of once",
        ),
        answer=2,
        hint="Does a sample get the same output in a micro-batch as in the full batch?",
        explanation=(
            "No loss scaling can fix it: with a forward pass that depends on the batch, the "
            "micro-batches compute another function than the full batch."
        ),
    ),
    # --- lesson 1 ---
    Question(
        id="l1_scale",
        lesson=1,
        prompt=(
            "Each micro-batch loss is a mean over its samples. You accumulate 4 equal "
            "micro-batches. What must you do to each loss before backward()?"
        ),
        choices=(
            "Divide it by 4, the number of micro-batches",
            "Nothing, the optimizer averages the gradients",
            "Multiply it by 4, once for each micro-batch",
            "Divide it by the number of its own samples",
        ),
        answer=0,
        hint="Four mean losses, each backward adding to .grad: how many mean gradients is that?",
        explanation=(
            "Gradients add up, so four mean losses give four times the mean gradient; dividing "
            "each by 4 makes the sum the mean over the whole batch."
        ),
    ),
    Question(
        id="l1_off_by_one",
        lesson=1,
        prompt=(
            "A loop counts micro-batches with i from 0 and steps when "
            "i % accumulation_steps == 0. What goes wrong?"
        ),
        choices=(
            "It never steps, as i never reaches a multiple of the window",
            "It steps after the first micro-batch: every window is shifted",
            "It steps twice in each window, after its first and last micro-batch",
            "Nothing: it steps once every N micro-batches, as it should",
        ),
        answer=1,
        hint="Try the first micro-batch: what is 0 % 4?",
        explanation=(
            "0 % N == 0, so the loop steps after micro-batch 0 on a single micro-batch, and from "
            "then on each window straddles two real ones. It steps as often as the right loop, "
            "so only a comparison with the full batch catches it; the fix is (i + 1) % N == 0."
        ),
    ),
    Prediction(
        id="l1_predict_steps",
        lesson=1,
        prompt=(
            "train_accumulated gets 10 micro-batches and accumulation_steps=4. How many times "
            "does it call optimizer.step()?"
        ),
        value=3,
        tolerance=0,
        computation=(
            "import torch\n"
            "from gradacc_lessons import train_accumulated\n"
            "from gradacc_lessons.demos.loops import count_steps\n\n"
            "model = torch.nn.Linear(4, 2)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "micro_batches = [(torch.randn(8, 4), torch.randint(2, (8,)))] * 10\n"
            "loss_fn = torch.nn.functional.cross_entropy\n"
            "count_steps(optimizer, lambda: train_accumulated(\n"
            "    model, optimizer, loss_fn, micro_batches, accumulation_steps=4))"
        ),
        hint="Cut 10 micro-batches into windows of 4. What happens to the short last window?",
        explanation=(
            "Windows of 4, 4 and 2 micro-batches: one step each, the short last window included "
            "(its losses weighted by its own samples), so 3 steps."
        ),
    ),
    # --- lesson 2 ---
    Question(
        id="l2_uneven",
        lesson=2,
        prompt=(
            "A window holds micro-batches of 24, 24 and 16 samples, each loss a mean over its "
            "micro-batch. Which weights make the accumulated gradient equal to the full batch's?"
        ),
        choices=(
            "1/3 each, since the window holds three micro-batches",
            "1 each, since the optimizer divides by the batch size",
            "1/24, 1/24 and 1/16, one over each micro-batch's size",
            "24/64, 24/64 and 16/64: each one's share of samples",
        ),
        answer=3,
        hint=(
            "The full batch's loss is a sum over 64 samples divided by 64. Which part of that "
            "sum is one micro-batch's mean?"
        ),
        explanation=(
            "The full-batch mean is a sum over all 64 samples divided by 64; a micro-batch's mean "
            "times its share (size/64) is exactly its part of that sum. 1/N over-weights the "
            "samples of the smaller micro-batch."
        ),
    ),
    Question(
        id="l2_tokens",
        lesson=2,
        prompt=(
            "Padded sequences, cross-entropy averaged over the real tokens of each micro-batch, "
            "each loss divided by N. What goes wrong, and what fixes it?"
        ),
        choices=(
            "Nothing, if the micro-batches hold the same number of sequences",
            "Tokens in short micro-batches weigh more; divide by the window's tokens",
            "Padding tokens enter the loss; a larger ignore_index fixes it",
            "The gradient is N times too large; dividing by N twice fixes it",
        ),
        answer=1,
        hint="Each micro-batch's mean divides by its own count of real tokens. Are those equal?",
        explanation=(
            "Each micro-batch's mean divides by its own token count, so the same sequence counts "
            "more in a short micro-batch. Summing token losses and dividing by the window's token "
            "count (num_items_in_batch in Transformers since the 2024 fix) is the full-batch mean."
        ),
    ),
    Question(
        id="l2_scheduler",
        lesson=2,
        prompt=(
            "With N = 4 micro-batches per window, a warm-up scheduler is stepped after every "
            "micro-batch. What happens?"
        ),
        choices=(
            "Nothing: the learning rate only matters at optimizer.step()",
            "Warm-up ends 4 times too early; step it once per update",
            "Warm-up lasts 4 times longer, as steps are skipped",
            "The learning rate is divided by 4 at every optimizer step",
        ),
        answer=1,
        hint="A scheduler counts its own step() calls. How many does one window make?",
        explanation=(
            "A schedule counts its own step() calls. Stepping it per micro-batch advances it N "
            "times per update, so it reaches every milestone after 1/N of the samples."
        ),
    ),
    Prediction(
        id="l2_predict_last_window",
        lesson=2,
        prompt=(
            "An epoch of 9 equal micro-batches with accumulation_steps=4 ends in a window of "
            "one micro-batch, and the loop divides every loss by 4. What is the relative error "
            "of that last window's gradient (0 means exact, 1 means all of it wrong)?"
        ),
        value=0.75,
        tolerance=0.01,
        computation=(
            "from gradacc_lessons.demos.pitfalls import compute_last_window_damage\n\n"
            "damage = compute_last_window_damage(micro_batch_count=9, accumulation_steps=4)\n"
            'damage.details["per_window"]["broken"][-1]'
        ),
        hint=(
            "The last window should carry the whole gradient of its samples. What fraction of "
            "it does one micro-batch divided by 4 carry?"
        ),
        explanation=(
            "The window holds one micro-batch divided by 4: a quarter of the gradient it stands "
            "for, so the error is 1 - 1/4 = 0.75 (the lesson's window of two gave 1 - 2/4 = 0.5)."
        ),
    ),
    # --- lesson 3 ---
    Question(
        id="l3_single_sample",
        lesson=3,
        prompt=(
            "Memory allows micro-batches of one sample. What happens to an MLP with "
            "BatchNorm1d in training mode?"
        ),
        choices=(
            "It trains, with the statistics of all the samples seen so far",
            "It trains like the full batch, as the statistics then match",
            "It trains, but its running mean is no longer updated",
            "PyTorch raises an error: one value has no variance",
        ),
        answer=3,
        hint="What is the variance of a single number?",
        explanation=(
            "With one sample, each feature has a single value: its batch mean is that value, "
            "so every output would collapse to BatchNorm's shift. PyTorch refuses ('Expected "
            "more than 1 value per channel when training'). Use LayerNorm or GroupNorm, or "
            "freeze BatchNorm."
        ),
    ),
    Prediction(
        id="l3_predict_running_mean",
        lesson=3,
        prompt=(
            "A BatchNorm layer with momentum 0.1 sees a window of N = 4 micro-batches, so its "
            "running mean is updated 4 times. What fraction of the running mean then comes "
            "from this window's data (a number between 0 and 1)?"
        ),
        value=0.3439,
        tolerance=0.01,
        computation=(
            "from gradacc_lessons.demos.batchnorm import compute_running_stats\n\n"
            'compute_running_stats(ns=(4,), momentum=0.1)["weight_on_new_data"][0]'
        ),
        hint="Each update keeps 1 - 0.1 = 0.9 of the old running mean. How much is left after 4?",
        explanation=(
            "After 4 updates 0.9^4 = 0.6561 of the old running mean is left, so 1 - 0.6561 = "
            "0.3439 comes from the window, not the 0.1 of one full-batch update. A momentum of "
            "1 - 0.9^(1/4) puts it back at 0.1."
        ),
    ),
    # --- lesson 4 ---
    Question(
        id="l4_floor",
        lesson=4,
        prompt=(
            "You keep the effective batch fixed and double the number of accumulation steps "
            "again and again. What does the peak memory approach?"
        ),
        choices=(
            "Zero, because memory is proportional to the micro-batch",
            "The activations of the whole effective batch, kept once",
            "What the parameters, gradients and optimizer state take",
            "About half of the peak measured without accumulation",
        ),
        answer=2,
        hint="Which parts of training memory do not depend on the samples one forward pass sees?",
        explanation=(
            "Only activations shrink with the micro-batch. Weights, their gradients and the "
            "optimizer's state exist whatever the micro-batch, so the peak levels off at them."
        ),
    ),
    Question(
        id="l4_time",
        lesson=4,
        prompt=(
            "The whole batch fits in memory. Compared with processing it at once, how does "
            "splitting it into 8 accumulated micro-batches change the time per update?"
        ),
        choices=(
            "It gets about 8 times shorter, one eighth of the work each",
            "It gets shorter, because the optimizer steps fewer times",
            "It gets shorter, as the activations are 8 times smaller",
            "It gets longer: small operations do less work per call",
        ),
        answer=3,
        hint="Accumulation changes how many samples each operation sees, not how many there are.",
        explanation=(
            "Accumulation saves memory, not time: the lesson measured it slower than the batch "
            "at once. It processes more samples per second than a step after every small "
            "batch, but makes N times fewer updates."
        ),
    ),
    Prediction(
        id="l4_predict_floor",
        lesson=4,
        prompt=(
            "A model of 10 million float32 parameters (torch.nn.Linear(10_000, 1_000)) is "
            "trained with Adam. How many MB (millions of bytes) do its parameters, gradients "
            "and optimizer state take together?"
        ),
        value=160.016,
        tolerance=1.0,
        computation=(
            "import torch\n"
            "from gradacc_lessons.memory import estimate_training_memory\n\n"
            "model = torch.nn.Linear(10_000, 1_000)\n"
            "optimizer = torch.optim.Adam(model.parameters())\n"
            "estimate_training_memory(model, optimizer, 1, 0.0).floor_bytes / 1e6"
        ),
        hint="Count the copies of the parameters: the weights, their gradients, Adam's moments.",
        explanation=(
            "10,001,000 parameters of 4 bytes: 40 MB of weights, 40 MB of gradients and Adam's "
            "two moments of 40 MB each, four copies in all: 160 MB (plus 8 bytes of step counts)."
        ),
    ),
    # --- lesson 5 ---
    Question(
        id="l5_curves",
        lesson=5,
        prompt=(
            "Three runs share the model, data order, AdamW, clipping and learning-rate schedule: "
            "batches of 128; micro-batches of 32 accumulated 4 at a time; batches of 32 without "
            "accumulation. Which runs have the same training curve?"
        ),
        choices=(
            "The batch of 128 and the accumulated run, up to rounding",
            "All three, since they see the same samples each epoch",
            "The accumulated run and the batches of 32: both see 32",
            "None of them: accumulation always adds noise to a curve",
        ),
        answer=0,
        hint="Which runs make the same updates, one for every 128 samples?",
        explanation=(
            "Each accumulated window is the same update as one batch of 128. A batch of 32 "
            "without accumulation is an optimizer step on its own: other updates, another run."
        ),
    ),
    Question(
        id="l5_scheduler",
        lesson=5,
        prompt=(
            "You switch a run from batches of 128 to micro-batches of 32 with 4 accumulation "
            "steps. How often must scheduler.step() and gradient clipping now run?"
        ),
        choices=(
            "After every micro-batch, four times as often as before",
            "Clipping after each micro-batch, the scheduler per window",
            "Once per optimizer step: after each window of four",
            "Only once per epoch, after the last window of the epoch",
        ),
        answer=2,
        hint="What does the schedule count, and which gradient must clipping see?",
        explanation=(
            "The schedule counts optimizer steps, and clipping must see the gradient of the "
            "whole effective batch: both happen once per window, so the run stays the same."
        ),
    ),
    Prediction(
        id="l5_predict_steps",
        lesson=5,
        prompt=(
            "Lesson 5's accumulated run, with batch=256 and micro_batch=64 instead: 10 epochs "
            "over the 1,536 training digits. How many optimizer steps does it take in all?"
        ),
        value=60,
        tolerance=0,
        computation=(
            "from gradacc_lessons.demos.training import TrainingConfig, train_run\n\n"
            'run = train_run("accumulated", TrainingConfig(batch=256, micro_batch=64))\n'
            "len(run.train_loss)  # one loss per optimizer step"
        ),
        hint="How many samples are behind one step, and how many steps make an epoch?",
        explanation=(
            "One step per 256 samples: 1,536 / 256 = 6 steps per epoch, 60 in 10 epochs, "
            "whatever the micro-batch. The micro-batch of 64 only sets N = 4."
        ),
    ),
    # --- lesson 6 ---
    Question(
        id="l6_no_sync",
        lesson=6,
        prompt=(
            "Under DistributedDataParallel you accumulate 4 micro-batches per step and write "
            "`loss = model(x)...` outside `with model.no_sync():`, and only `loss.backward()` "
            "inside it. What happens?"
        ),
        choices=(
            "Every micro-batch still all-reduces: four times the traffic",
            "Gradients are never all-reduced, so the processes drift apart",
            "It works as intended, with one all-reduce per optimizer step",
            "DDP raises an error at the first backward of the window",
        ),
        answer=0,
        hint="DDP decides during the forward pass whether the coming backward will all-reduce.",
        explanation=(
            "DDP decides in the forward pass whether the backward will sync. no_sync() must wrap "
            "forward and backward of every micro-batch but the last of a window."
        ),
    ),
    Question(
        id="l6_scaler",
        lesson=6,
        prompt=(
            "Training in float16 with a GradScaler, accumulation and gradient clipping: when "
            "do you call scaler.unscale_(optimizer)?"
        ),
        choices=(
            "After every micro-batch's backward, before adding to .grad",
            "Once per window, after the last backward, before clipping",
            "Never: scaler.step() unscales, so clip the scaled gradients",
            "After scaler.update(), once the new scale is known",
        ),
        answer=1,
        hint="Clipping compares the gradient's norm with max_norm. Which gradient must it see?",
        explanation=(
            "The scaled gradients add up in .grad over the window; unscale once, so that "
            "clipping sees the true norm, then step and update once per window."
        ),
    ),
    Prediction(
        id="l6_predict_effective_batch",
        lesson=6,
        prompt=(
            "4 GPUs each run micro-batches of 32 samples and accumulate 8 of them per optimizer "
            "step. How many samples are behind one step?"
        ),
        value=1024,
        tolerance=0,
        computation=(
            "from gradacc_lessons.demos.distributed import effective_batch\n\n"
            "effective_batch(world_size=4, micro_batch=32, accumulation_steps=8)"
        ),
        hint="Every GPU sees micro-batch x accumulation steps samples per step.",
        explanation="world size x micro-batch x accumulation steps = 4 x 32 x 8 = 1024 samples.",
    ),
    Prediction(
        id="l6_predict_zero3",
        lesson=6,
        prompt=(
            "1 billion parameters, Adam, float32 (4 bytes a value), ZeRO-3 sharded over 4 GPUs: "
            "how many GiB (2^30 bytes) of parameters, gradients and Adam's two moments does "
            "each GPU keep as its own shards?"
        ),
        value=3.725,
        tolerance=0.05,
        computation=(
            "from gradacc_lessons.demos.sharding import sharded_bytes\n\n"
            "sum(sharded_bytes(1_000_000_000, world_size=4, stage=3).values()) / 2**30"
        ),
        hint="Adam in float32 keeps 16 bytes per parameter; ZeRO-3 splits all of it.",
        explanation=(
            "4 bytes each for weights, gradients and two moments: 16 GB in all, a quarter of it "
            "per GPU, 4e9 / 2^30 = 3.73 GiB."
        ),
    ),
    # --- lesson 7: accumulation in the frameworks ---
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
            "With Accelerate, 1,000 micro-batches per epoch and gradient_accumulation_steps=4, "
            "how many steps should a linear schedule for one epoch be sized for?"
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
            "done when the epoch ends."
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
            "lines = frameworks.Recipe(ids, labels, micro_batch=2, accumulation_steps=4)\n"
            "lines.window_labels()[1]"
        ),
        hint="For GPT-2 the Trainer counts the labels before the shift by one position.",
        explanation=(
            "Unshifted, every line keeps its first label too: 360 targets + 1 per line x 8 "
            "lines = 368, so each update of that window is 360/368 of the full batch's."
        ),
    ),
)


def questions_for(lesson: int) -> list[AnyQuestion]:
    """The questions that the self-check at the end of `lesson` asks.

    >>> sorted({q.lesson for q in questions_for(3)})
    [3]
    """
    lessons = sorted({q.lesson for q in QUESTIONS})
    if (
        isinstance(lesson, bool)
        or not isinstance(lesson, numbers.Integral)
        or lesson not in lessons
    ):
        raise ValueError(
            f"lesson must be one of the lessons with questions, {lessons}, got {lesson!r}"
        )
    return [q for q in QUESTIONS if q.lesson == lesson]


def faq_questions() -> list[AnyQuestion]:
    """The five FAQ questions, in the FAQ's order.

    >>> [q.faq for q in faq_questions()]
    [1, 2, 3, 4, 5]
    """
    return sorted((q for q in QUESTIONS if q.faq is not None), key=lambda q: q.faq)


def lesson_questions() -> list[AnyQuestion]:
    """Every lesson's own questions (all but the FAQ), by lesson.

    >>> [q.lesson for q in lesson_questions()] == sorted(q.lesson for q in lesson_questions())
    True
    """
    return sorted((q for q in QUESTIONS if q.faq is None), key=lambda q: q.lesson)


def self_study_questions() -> list[AnyQuestion]:
    """The self-study quiz: the five FAQ questions in order, then every lesson's own.

    >>> [q.faq for q in self_study_questions()[:5]]
    [1, 2, 3, 4, 5]
    """
    return faq_questions() + lesson_questions()


def question(id: str) -> AnyQuestion:
    """The question with this id.

    >>> question("l1_scale").lesson
    1
    """
    for q in QUESTIONS:
        if q.id == id:
            return q
    raise ValueError(f"id={id!r} names no question; known ids: {[q.id for q in QUESTIONS]}")
