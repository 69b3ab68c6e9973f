"""Lesson 7's self-check: accumulation in the frameworks."""

from __future__ import annotations

from gradacc_lessons.quiz.questions.kinds import Prediction, Question

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
