"""The self-check question bank: what the lessons' self-checks and the self-study quiz ask.

The instructor's graded assignments have their own bank, in the instructor's
package (`quizzes/`): same goals, other wording and values, so that what a
student sees here does not answer a graded question.
"""

from __future__ import annotations

from dataclasses import dataclass

LETTERS = "ABCDEFGH"  # the letters of the choices, A for the first


@dataclass(frozen=True)
class Question:
    """A multiple-choice question with one right answer and the explanation shown after."""

    id: str  # stable, unique; used as nbgrader grade id and widget class name
    lesson: int  # the lesson whose self-check asks it
    prompt: str
    choices: tuple[str, ...]
    answer: int  # index of the right choice in `choices`
    explanation: str
    faq: int | None = None  # position of the FAQ item it tests (1-5), if any
    hint: str = ""  # a nudge towards the idea, shown after a wrong first answer

    @property
    def letter(self) -> str:
        """The right choice as a letter, A for the first choice."""
        return LETTERS[self.answer]


QUESTIONS: tuple[Question, ...] = (
    # --- the FAQ, in its order ---
    Question(
        id="faq1_what",
        lesson=1,
        faq=1,
        prompt="What is gradient accumulation?",
        choices=(
            "Averaging the model's weights over several training runs",
            "Adding up the gradients of several small micro-batches in .grad, then making "
            "one update, to stand in for one large batch when memory is short",
            "Raising the learning rate step by step during warm-up",
            "Keeping a running mean of the loss to smooth the training curve",
        ),
        answer=1,
        explanation=(
            "backward() adds each micro-batch's gradient to the .grad buffers; after N "
            "micro-batches one optimizer step uses their sum, the gradient of one large batch."
        ),
    ),
    Question(
        id="faq2_purpose",
        lesson=1,
        faq=2,
        prompt="What does gradient accumulation mainly let you do?",
        choices=(
            "Train faster than with the same batch held in memory at once",
            "Use fewer parameters for the same accuracy",
            "Train with a large effective batch while memory holds only one micro-batch at a time",
            "Skip the backward pass for most micro-batches",
        ),
        answer=2,
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
            "You accumulate over N micro-batches. When do optimizer.step() and "
            "optimizer.zero_grad() happen?"
        ),
        choices=(
            "Both after every micro-batch",
            "step() after every micro-batch, zero_grad() once per window of N",
            "Gradients are cleared before training starts; step() once after the N-th "
            "micro-batch of each window, then zero_grad() before the next window",
            "zero_grad() after every micro-batch, step() once per window of N",
        ),
        answer=2,
        explanation=(
            "Clearing inside the window would throw away the gradients being added up, "
            "stepping inside it would update on a part of the batch. Start with empty "
            "buffers, step once per effective batch, clear right after."
        ),
    ),
    Question(
        id="faq4_norm_layers",
        lesson=3,
        faq=4,
        prompt="Which normalisation layers pair cleanly with gradient accumulation?",
        choices=(
            "BatchNorm, because it normalises over the batch",
            "LayerNorm and GroupNorm, because they normalise each sample on its own",
            "Any normalisation layer, as long as the loss is divided by N",
            "None: normalisation layers always break accumulation",
        ),
        answer=1,
        explanation=(
            "LayerNorm and GroupNorm compute their statistics inside each sample, so "
            "splitting the batch changes nothing; BatchNorm's statistics depend on which "
            "samples share the micro-batch."
        ),
    ),
    Question(
        id="faq5_batchnorm",
        lesson=3,
        faq=5,
        prompt=(
            "Why can four micro-batches through a BatchNorm model give different gradients "
            "from one batch of the same total size?"
        ),
        choices=(
            "The loss was not divided by four",
            "The forward pass depends on the batch: BatchNorm normalises with each "
            "micro-batch's own mean and variance, so the outputs themselves differ",
            "float32 rounding adds up over four backward passes",
            "The optimizer's momentum is updated four times",
        ),
        answer=1,
        explanation=(
            "No loss scaling can fix it: with batch-dependent forward computations the "
            "micro-batches compute a different function than the full batch."
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
            "Nothing: the optimizer averages the gradients",
            "Multiply it by 4",
            "Divide it by 4",
            "Divide it by the number of parameters",
        ),
        answer=2,
        explanation=(
            "Gradients add up, so four mean losses give four times the mean gradient; "
            "dividing each by 4 makes the sum the mean over the whole batch."
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
            "1/3 for each, as the window has three micro-batches",
            "24/64, 24/64 and 16/64: each micro-batch's share of the window's samples",
            "1 for each: the optimizer divides by the batch size",
            "1/24, 1/24 and 1/16: one over each micro-batch's own size",
        ),
        answer=1,
        explanation=(
            "The full-batch mean is a sum over all 64 samples divided by 64; a micro-batch's "
            "mean times its share (size/64) is exactly its part of that sum. 1/N over-weights "
            "the samples of the smaller micro-batch."
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
            "Nothing, as long as the micro-batches have the same number of sequences",
            "Padding tokens enter the loss; the fix is a larger ignore_index",
            "Tokens of micro-batches with few real tokens weigh more; divide each micro-batch's "
            "summed token loss by the real tokens of the whole window instead",
            "The gradients are N times too large; divide by N twice",
        ),
        answer=2,
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
            "Warm-up ends after a quarter of the intended samples: the schedule runs 4 times "
            "too fast; step the scheduler once per optimizer step",
            "Warm-up lasts 4 times longer than intended",
            "The learning rate is divided by 4 at every step",
        ),
        answer=1,
        explanation=(
            "A schedule counts its own step() calls. Stepping it per micro-batch advances it N "
            "times per update, so it reaches every milestone after 1/N of the samples."
        ),
    ),
    # --- lesson 3 ---
    Question(
        id="l3_running_stats",
        lesson=3,
        prompt=(
            "A BatchNorm layer (momentum 0.1) sees N = 8 micro-batches instead of one batch. "
            "What happens to its running mean?"
        ),
        choices=(
            "Nothing: running statistics are only updated at optimizer.step()",
            "It is updated 8 times, putting about 57 % of its weight on new data instead of 10 %; "
            "a momentum of 1 - 0.9^(1/8) puts it back near 10 %",
            "It is updated once with the mean of the 8 micro-batch means, like the full batch",
            "It is divided by 8, like the loss",
        ),
        answer=1,
        explanation=(
            "Every train-mode forward updates the running statistics, so a window makes N updates "
            "of a noisier estimate; 1 - (1 - m)^N of the weight lands on the window's data."
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
            "Zero: memory is proportional to the micro-batch",
            "Parameters + gradients + optimizer state (plus a few temporaries): the floor "
            "that accumulation cannot lower",
            "The activations of the whole effective batch",
            "Half of the peak without accumulation",
        ),
        answer=1,
        explanation=(
            "Only activations shrink with the micro-batch. Weights, their gradients and the "
            "optimizer's state exist whatever the micro-batch, so the peak levels off at them."
        ),
    ),
    Question(
        id="l4_adam_state",
        lesson=4,
        prompt=(
            "A model has 10 million float32 parameters and is trained with Adam. How much "
            "memory do parameters, gradients and optimizer state take together, before any "
            "activation?"
        ),
        choices=("40 MB", "80 MB", "120 MB", "160 MB"),
        answer=3,
        explanation=(
            "40 MB of weights, 40 MB of gradients, and Adam's two moments of 40 MB each: four "
            "copies of the parameters, 160 MB."
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
            "It gets about 8 times shorter",
            "It stays the same or gets longer: smaller micro-batches do less work per "
            "operation, so use accumulation only when memory requires it",
            "It gets shorter, because the optimizer steps fewer times",
            "It gets shorter, because activations are smaller",
        ),
        answer=1,
        explanation=(
            "Accumulation saves memory, not time. It beats taking a step after every small "
            "batch, but not processing the batch at once, which the lesson measured."
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
            "All three: they see the same samples in every epoch",
            "The batch of 128 and the accumulated run, up to float rounding; the batches of 32 "
            "make four times as many, different updates",
            "The accumulated run and the batches of 32, because their forward passes see 32 "
            "samples",
            "None: accumulation always adds noise to the curve",
        ),
        answer=1,
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
            "Once per optimizer step, after the 4th micro-batch of each window, as before",
            "Clipping after every micro-batch, the scheduler once per window",
            "Only once per epoch",
        ),
        answer=1,
        explanation=(
            "The schedule counts optimizer steps, and clipping must see the gradient of the "
            "whole effective batch: both happen once per window, so the run stays the same."
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
            "Gradients are never all-reduced, so the processes drift apart",
            "It works as intended: one all-reduce per optimizer step",
            "Every micro-batch still all-reduces its gradients: the result is right, but the "
            "communication is four times what it needs to be",
            "DDP raises an error on the first backward",
        ),
        answer=2,
        explanation=(
            "DDP decides in the forward pass whether the backward will sync. no_sync() must wrap "
            "forward and backward of every micro-batch but the last of a window."
        ),
    ),
    Question(
        id="l6_effective_batch",
        lesson=6,
        prompt=(
            "8 GPUs each run micro-batches of 16 samples and accumulate 4 of them per optimizer "
            "step. What is the effective batch of one step?"
        ),
        choices=("16", "64", "128", "512"),
        answer=3,
        explanation=(
            "world size x micro-batch x accumulation steps = 8 x 16 x 4 = 512 samples behind "
            "every update."
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
            "After every micro-batch's backward",
            "Never: scaler.step() unscales, so clip the scaled gradients",
            "Once per window, after the last micro-batch's backward and before clipping",
            "After scaler.update()",
        ),
        answer=2,
        explanation=(
            "The scaled gradients add up in .grad over the window; unscale once, so that "
            "clipping sees the true norm, then step and update once per window."
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
            "They are dropped: the optimizer steps twice in the epoch",
            "They make a third step, but each loss is still divided by 4: the step is half as "
            "long as the full batch's",
            "They make a third step, exactly the full batch's",
            "They stay in .grad and join the first window of the next epoch, which then adds up "
            "six micro-batches",
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
            "The number of micro-batches in the window, since each loss is already a mean",
            "The number of sequences in the window",
            "The window's labels that are not -100",
            "The window's labels that are not -100, shifted by one",
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
            "The window's loss divided by 4",
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
        choices=("4", "250", "1,000", "4,000"),
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
            "Nothing: inside accumulate(), Accelerate notices that the window is not complete "
            "and skips the call until its last micro-batch",
            "Accelerate raises an error inside accumulate()",
            "Every micro-batch clips a partial sum of the window's gradient, so the step is not "
            "the full batch's clipped step",
            "The gradient is clipped twice at the end of the window",
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
            "engine.step() must be called once per window, after its last micro-batch, or the "
            "optimizer steps 8 times",
            "Nothing: this is DeepSpeed's documented loop",
            "The loss must be multiplied by 8 instead",
            "The loss is divided by 8 twice, so every update is 8 times too small",
        ),
        answer=3,
        explanation=(
            "engine.backward scales the loss by 1/gradient_accumulation_steps itself, and "
            "engine.step() is meant to be called after every micro-batch: the engine only "
            "steps at window boundaries."
        ),
        hint="Which of the two calls already knows N?",
    ),
)


def questions_for(lesson: int) -> list[Question]:
    """The questions that the self-check at the end of `lesson` asks.

    >>> all(q.lesson == 3 for q in questions_for(3))
    True
    """
    return [q for q in QUESTIONS if q.lesson == lesson]


def faq_questions() -> list[Question]:
    """The five FAQ questions, in the FAQ's order.

    >>> [q.faq for q in faq_questions()]
    [1, 2, 3, 4, 5]
    """
    return sorted((q for q in QUESTIONS if q.faq is not None), key=lambda q: q.faq)


def question(id: str) -> Question:
    """The question with this id."""
    for q in QUESTIONS:
        if q.id == id:
            return q
    raise ValueError(f"no question has the id {id!r}; known ids: {[q.id for q in QUESTIONS]}")
