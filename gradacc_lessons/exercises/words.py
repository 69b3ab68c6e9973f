"""What the exercises say, in English and Yorùbá: one entry per message, `{name}` fields filled in.

The same two languages as the self-check (`gradacc_lessons.quiz.language.LANGUAGES`); the
Yorùbá follows the course's glossary (fèrèsé for a window, ìmúdójúìwọ̀n for an update).
"""

from __future__ import annotations

from gradacc_lessons.quiz.language import LANGUAGES

MESSAGES: dict[str, dict[str, str]] = {
    # The runner's own words
    "right": {
        "en": "Right: on fresh cases your function matches the reference.",
        "yo": "Ó tọ̀nà: lórí àwọn àpẹẹrẹ tuntun, iṣẹ́ rẹ bá ti ìtọ́kasí mu.",
    },
    "not_written": {
        "en": "Not written yet: replace the `...` with your code, run the cell, then check again.",
        "yo": "O kò tíì kọ ọ́: fi kóòdù rẹ rọ́pò `...`, ṣiṣẹ́ sẹ́ẹ̀lì náà, lẹ́yìn náà "
        "ṣàyẹ̀wò lẹ́ẹ̀kan sí i.",
    },
    "not_a_function": {
        "en": "check() needs your function itself (its name, without brackets), not a value "
        "of type {got}.",
        "yo": "check() nílò iṣẹ́ rẹ fúnra rẹ̀ (orúkọ rẹ̀, láìsí àkámọ́), kì í ṣe iye oríṣi {got}.",
    },
    "raised": {
        "en": "Your function raised {error}. Fix that line, run the cell, and check again.",
        "yo": "Iṣẹ́ rẹ gbé àṣìṣe {error} dìde. Tún ìlà náà ṣe, ṣiṣẹ́ sẹ́ẹ̀lì náà, kí o sì "
        "ṣàyẹ̀wò lẹ́ẹ̀kan sí i.",
    },
    "time_limit": {
        "en": "The check stopped your function after {seconds} s, its time limit, on a "
        "problem that needs well under a second: is there a loop that never ends (a `while` "
        "whose condition stays true)?",
        "yo": "Ìṣàyẹ̀wò dá iṣẹ́ rẹ dúró lẹ́yìn ìṣẹ́jú-àáyá {seconds}, òpin àkókò rẹ̀, "
        "lórí ìṣòro tí kò tó ìṣẹ́jú-àáyá kan: "
        "ṣé lóòpù kan wà tí kò ní parí (`while` tí ipò rẹ̀ kò di èké)?",
    },
    "too_many_steps": {
        "en": "optimizer.step() was called {steps} times on a handful of micro-batches, and the "
        "check stopped your loop: does it ever leave its loop?",
        "yo": "A pe optimizer.step() ní ìgbà {steps} lórí micro-batch díẹ̀, ìṣàyẹ̀wò sì dá lóòpù rẹ "
        "dúró: ṣé ó ń jáde kúrò nínú lóòpù rẹ̀ rárá?",
    },
    "solution_later": {
        "en": "The solution shows once you have checked an attempt of your own: write one, run "
        "check(), then ask again.",
        "yo": "Ìdáhùn máa hàn lẹ́yìn tí o bá ti ṣàyẹ̀wò ìgbìyànjú tìrẹ: kọ ọ̀kan, ṣiṣẹ́ check(), "
        "lẹ́yìn náà béèrè lẹ́ẹ̀kan sí i.",
    },
    "solution_is": {
        "en": "The reference solution:",
        "yo": "Ìdáhùn ìtọ́kasí:",
    },
    # Lesson 8: the exercises' score
    "exercise_score": {
        "en": "Exercises: {first} / {total} right at the first try · {final} / {total} right "
        "in the end",
        "yo": "Àwọn iṣẹ́ ìdánrawò: {first} / {total} tọ̀nà ní ìgbìyànjú àkọ́kọ́ · {final} / "
        "{total} tọ̀nà ní ìparí",
    },
    "not_checked": {"en": "not checked yet", "yo": "a kò tíì ṣàyẹ̀wò rẹ̀"},
    "yes": {"en": "yes", "yo": "bẹ́ẹ̀ni"},
    "no": {"en": "no", "yo": "rárá"},
    "col_lesson": {"en": "lesson", "yo": "ẹ̀kọ́"},
    "col_exercise": {"en": "exercise", "yo": "iṣẹ́ ìdánrawò"},
    "col_tries": {"en": "checks", "yo": "ìṣàyẹ̀wò"},
    "col_first": {"en": "right at the first try", "yo": "tọ̀nà ní ìgbìyànjú àkọ́kọ́"},
    "col_final": {"en": "right in the end", "yo": "tọ̀nà ní ìparí"},
    # The site, where no kernel runs
    "static_note": {
        "en": "Run this notebook in JupyterLab or Colab to write your function and check it: the "
        "check measures it and says what is wrong. The hint and the solution are folded below.",
        "yo": "Ṣí ìwé yìí nínú JupyterLab tàbí Colab láti kọ iṣẹ́ rẹ kí o sì ṣàyẹ̀wò rẹ̀: ìṣàyẹ̀wò "
        "ń wọ̀n ọ́, ó sì ń sọ ohun tí kò tọ̀nà. Ìtọ́ka àti ìdáhùn wà ní ìsàlẹ̀: tẹ̀ wọ́n láti ṣí wọn.",
    },
    "hint_title": {"en": "Hint", "yo": "Ìtọ́ka"},
    "solution_title": {"en": "Solution", "yo": "Ìdáhùn"},
    # Lesson 1: the accumulation loop
    "no_step": {
        "en": "optimizer.step() was never called: the gradients were accumulated but no update "
        "happened. Step once at the end of each window.",
        "yo": "A kò pe optimizer.step() rárá: a kó gradient jọ ṣùgbọ́n ìmúdójúìwọ̀n kankan kò "
        "ṣẹlẹ̀. Pe step() lẹ́ẹ̀kan ní òpin fèrèsé kọ̀ọ̀kan.",
    },
    "step_every_micro_batch": {
        "en": "optimizer.step() ran after every micro-batch, not once per window of {n}: that is "
        "small-batch training, not accumulation.",
        "yo": "optimizer.step() ṣiṣẹ́ lẹ́yìn micro-batch kọ̀ọ̀kan, kì í ṣe lẹ́ẹ̀kan fún fèrèsé "
        "{n} kọ̀ọ̀kan: training batch kékeré nìyẹn, kì í ṣe ìkójọpọ̀.",
    },
    "off_by_one": {
        "en": "The first step came after micro-batch 1, not {n}: `i % N == 0` is true at i = 0. "
        "Step after the window's last micro-batch.",
        "yo": "Ìmúdójúìwọ̀n àkọ́kọ́ wá lẹ́yìn micro-batch 1, kì í ṣe {n}: `i % N == 0` jẹ́ òótọ́ "
        "nígbà tí i = 0. Pe step() lẹ́yìn micro-batch tó kẹ́yìn nínú fèrèsé.",
    },
    "step_times": {
        "en": "optimizer.step() came after micro-batches {got}; a loop with one step per window "
        "steps after {expected}.",
        "yo": "optimizer.step() wá lẹ́yìn micro-batch {got}; lóòpù tí ó ń pe step() lẹ́ẹ̀kan "
        "fún fèrèsé kọ̀ọ̀kan ń pè é lẹ́yìn {expected}.",
    },
    "not_cleared_first": {
        "en": "Window 1's gradient holds what was in .grad before your loop began: clear the "
        "gradients before the first micro-batch.",
        "yo": "Gradient fèrèsé 1 ní ohun tí ó wà nínú .grad kí lóòpù rẹ tó bẹ̀rẹ̀: sọ gradient "
        "di òdo ṣáájú micro-batch àkọ́kọ́.",
    },
    "not_cleared_after": {
        "en": "Window {window}'s gradient holds window {previous}'s: clear the gradients after "
        "the step.",
        "yo": "Gradient fèrèsé {window} ní ti fèrèsé {previous} nínú: sọ gradient di òdo lẹ́yìn "
        "ìmúdójúìwọ̀n.",
    },
    "cleared_each_micro_batch": {
        "en": "Each step saw only its window's last micro-batch: the gradients were cleared "
        "inside the window. Clear them once, after the step, so the {n} micro-batches add up.",
        "yo": "Ìmúdójúìwọ̀n kọ̀ọ̀kan rí micro-batch tó kẹ́yìn fèrèsé rẹ̀ nìkan: a sọ gradient di "
        "òdo nínú fèrèsé. Sọ ọ́ di òdo lẹ́ẹ̀kan, lẹ́yìn ìmúdójúìwọ̀n, kí micro-batch {n} náà lè "
        "kó jọ.",
    },
    "not_divided": {
        "en": "The gradient is {factor}× the full batch's: the loss is not divided by N = {n}.",
        "yo": "Gradient náà jẹ́ ìlọ́po {factor} ti batch kíkún: a kò pín loss sí N = {n}.",
    },
    "divided_twice": {
        "en": "The gradient is 1/{n} of the full batch's: the loss is divided by N twice.",
        "yo": "Gradient náà jẹ́ 1/{n} ti batch kíkún: a pín loss sí N lẹ́ẹ̀mejì.",
    },
    "scaled": {
        "en": "Window {window}'s gradient points the right way but is {factor}× the full "
        "batch's: look at the weight each micro-batch's loss gets.",
        "yo": "Gradient fèrèsé {window} dojú kọ ibi tí ó tọ̀nà, ṣùgbọ́n ó jẹ́ ìlọ́po {factor} ti "
        "batch kíkún: wo ìwọ̀n tí loss micro-batch kọ̀ọ̀kan ń gbà.",
    },
    "window_differs": {
        "en": "Window {window}'s gradient differs from its full batch's by {error} (relative "
        "error): it is not a sum of that window's micro-batches with the right weights.",
        "yo": "Gradient fèrèsé {window} yàtọ̀ sí ti batch kíkún rẹ̀ ní {error} (relative error): "
        "kì í ṣe àròpọ̀ àwọn micro-batch fèrèsé náà pẹ̀lú ìwọ̀n tí ó tọ̀nà.",
    },
    "hint_l1_loop": {
        "en": "Four things, in order: clear .grad before the loop; divide each micro-batch's "
        "loss by N before backward(); step only when the micro-batch is the N-th of its window "
        "(enumerate counts from 0); clear right after the step.",
        "yo": "Nǹkan mẹ́rin, ní ìtẹ̀léra: sọ .grad di òdo ṣáájú lóòpù; pín loss micro-batch "
        "kọ̀ọ̀kan sí N ṣáájú backward(); pe step() nígbà tí micro-batch bá jẹ́ èyí tó kẹ́yìn "
        "nínú fèrèsé rẹ̀ nìkan (enumerate ń kà láti 0); sọ gradient di òdo lẹ́sẹ̀kẹsẹ̀ lẹ́yìn step().",
    },
    "ends_not_bool": {
        "en": "Your function returned a {got}: return True when optimizer.step() comes after "
        "micro-batch i, else False.",
        "yo": "Iṣẹ́ rẹ dá {got} padà: dá True padà nígbà tí optimizer.step() bá wá lẹ́yìn "
        "micro-batch i, bí bẹ́ẹ̀ kọ́ False.",
    },
    "short_window_dropped": {
        "en": "With {micro_batches} micro-batches and N = {n}, the last window holds only "
        "{short}, and your function never ends it: its gradients are accumulated and never "
        "used. The last micro-batch always ends a window.",
        "yo": "Pẹ̀lú micro-batch {micro_batches} àti N = {n}, fèrèsé tó kẹ́yìn ní {short} nìkan, "
        "iṣẹ́ rẹ kò sì parí rẹ̀ rárá: a kó gradient rẹ̀ jọ ṣùgbọ́n a kò lò wọ́n. Micro-batch tó "
        "kẹ́yìn máa ń parí fèrèsé kan nígbà gbogbo.",
    },
    "one_step_at_the_end": {
        "en": "With {micro_batches} micro-batches and N = {n}, your function ends a window only "
        "after the last micro-batch: one step for the whole run. A window ends after every N "
        "micro-batches.",
        "yo": "Pẹ̀lú micro-batch {micro_batches} àti N = {n}, iṣẹ́ rẹ ń parí fèrèsé kan lẹ́yìn "
        "micro-batch tó kẹ́yìn nìkan: ìmúdójúìwọ̀n kan fún gbogbo training. Fèrèsé kan ń parí "
        "lẹ́yìn micro-batch N kọ̀ọ̀kan.",
    },
    "hint_l1_window_end": {
        "en": "i counts from 0, so micro-batch i is the (i + 1)-th. Which counts are the last of "
        "a window of N, and what about a last window that N does not fill?",
        "yo": "i ń kà láti 0, nítorí náà micro-batch i ni èyí tó jẹ́ (i + 1). Àwọn iye wo ló "
        "kẹ́yìn fèrèsé N, fèrèsé tó kẹ́yìn tí N kò kún ńkọ́?",
    },
    # Lesson 2: uneven windows, tokens, scheduler and clipping
    "no_gradient": {
        "en": ".grad is empty after your function: call backward() on each micro-batch's "
        "weighted loss.",
        "yo": ".grad ṣófo lẹ́yìn iṣẹ́ rẹ: pe backward() lórí loss micro-batch kọ̀ọ̀kan lẹ́yìn tí o "
        "bá ti fún un ní ìwọ̀n rẹ̀.",
    },
    "divided_by_n_samples": {
        "en": "Each micro-batch's loss was divided by N = {n}, but the sizes are {counts}: a "
        "sample of the micro-batch of {small} counts {times} times. Weight each loss by its "
        "micro-batch's share of the window's samples.",
        "yo": "A pín loss micro-batch kọ̀ọ̀kan sí N = {n}, ṣùgbọ́n ìwọ̀n wọn jẹ́ {counts}: "
        "àpẹẹrẹ kan nínú micro-batch {small} ń ka ìlọ́po {times}. Fún loss kọ̀ọ̀kan ní ìwọ̀n "
        "ìpín micro-batch rẹ̀ nínú àwọn àpẹẹrẹ fèrèsé.",
    },
    "divided_by_n_tokens": {
        "en": "Each micro-batch's token mean was divided by N = {n} (the 2024 Transformers bug), "
        "but its micro-batches hold {counts} real tokens: a token of the micro-batch of {small} "
        "counts {times} times. Weight each loss by its share of the window's real tokens.",
        "yo": "A pín àròpín token micro-batch kọ̀ọ̀kan sí N = {n} (àṣìṣe Transformers ti 2024), "
        "ṣùgbọ́n àwọn micro-batch rẹ̀ ní token gidi {counts}: token kan nínú micro-batch {small} "
        "ń ka ìlọ́po {times}. Fún loss kọ̀ọ̀kan ní ìwọ̀n ìpín rẹ̀ nínú token gidi fèrèsé.",
    },
    "unweighted": {
        "en": "The gradient is the sum of the {n} micro-batches' mean gradients, about {n}× the "
        "full batch's: each loss needs a weight before backward().",
        "yo": "Gradient náà jẹ́ àròpọ̀ gradient àròpín micro-batch {n}, ó fẹ́rẹ̀ jẹ́ ìlọ́po {n} "
        "ti batch kíkún: loss kọ̀ọ̀kan nílò ìwọ̀n ṣáájú backward().",
    },
    "weighted_by_samples": {
        "en": "Each loss was weighted by its share of the samples, but these losses average over "
        "real tokens ({counts} per micro-batch): weight by the share of tokens instead.",
        "yo": "A fún loss kọ̀ọ̀kan ní ìwọ̀n ìpín àpẹẹrẹ rẹ̀, ṣùgbọ́n àwọn loss wọ̀nyí ń ṣe àròpín "
        "lórí token gidi ({counts} nínú micro-batch kọ̀ọ̀kan): lo ìpín token dípò rẹ̀.",
    },
    "not_divided_by_total": {
        "en": "Each loss was multiplied by its count of {unit}, but not divided by the window's "
        "{total}: the gradient is {total}× too large.",
        "yo": "A sọ loss kọ̀ọ̀kan di ìlọ́po iye {unit} rẹ̀, ṣùgbọ́n a kò pín in sí {total} ti "
        "fèrèsé: gradient náà tóbi ní ìlọ́po {total}.",
    },
    "window_off": {
        "en": "With micro-batches of {counts} {unit}, .grad differs from the full batch's "
        "gradient by {error} (relative error): check the weight each loss gets before backward().",
        "yo": "Pẹ̀lú micro-batch ti {unit} {counts}, .grad yàtọ̀ sí gradient batch kíkún ní "
        "{error} (relative error): ṣàyẹ̀wò ìwọ̀n tí loss kọ̀ọ̀kan ń gbà ṣáájú backward().",
    },
    "scheduler_never": {
        "en": "Every optimizer step used the same learning rate: scheduler.step() was never "
        "called. Call it once after each optimizer.step().",
        "yo": "Ìmúdójúìwọ̀n optimizer kọ̀ọ̀kan lo learning rate kan náà: a kò pe scheduler.step() "
        "rárá. Pè é lẹ́ẹ̀kan lẹ́yìn optimizer.step() kọ̀ọ̀kan.",
    },
    "scheduler_per_micro_batch": {
        "en": "The scheduler moved {steps} steps between two optimizer steps: it is stepped "
        "after every micro-batch, so warm-up and decay run N = {n} times too fast. Step it "
        "with the optimizer.",
        "yo": "Scheduler lọ ní ìgbésẹ̀ {steps} láàárín ìmúdójúìwọ̀n optimizer méjì: a ń pè é "
        "lẹ́yìn micro-batch kọ̀ọ̀kan, nítorí náà warm-up àti decay ń yára ní ìlọ́po N = {n}. "
        "Pè é pẹ̀lú optimizer.",
    },
    "scheduler_before_step": {
        "en": "The first optimizer step used the second step's learning rate: scheduler.step() "
        "ran before optimizer.step(). Step the optimizer first.",
        "yo": "Ìmúdójúìwọ̀n àkọ́kọ́ lo learning rate ti ìgbésẹ̀ kejì: scheduler.step() ṣiṣẹ́ "
        "ṣáájú optimizer.step(). Pe optimizer.step() lákọ̀ọ́kọ́.",
    },
    "lr_differs": {
        "en": "The scheduler had stepped {got} times at each optimizer step; once per optimizer "
        "step gives {expected}.",
        "yo": "Scheduler ti ṣe ìgbésẹ̀ {got} ní ìmúdójúìwọ̀n kọ̀ọ̀kan; lẹ́ẹ̀kan fún ìmúdójúìwọ̀n "
        "kọ̀ọ̀kan ń fún wa ní {expected}.",
    },
    "not_clipped": {
        "en": "optimizer.step() saw a gradient of norm {norm}, above max_norm = {max_norm}: it "
        "was not clipped before the step. Clip once, between the last backward() and step().",
        "yo": "optimizer.step() rí gradient tí norm rẹ̀ jẹ́ {norm}, ó ju max_norm = {max_norm} "
        "lọ: a kò gé e kí step() tó ṣiṣẹ́. Gé e lẹ́ẹ̀kan, láàárín backward() tó kẹ́yìn àti step().",
    },
    "clipped_inside_window": {
        "en": "Window {window}'s gradient is within max_norm but points elsewhere than the "
        "full batch's clipped gradient: it was clipped before the window was complete, so its "
        "micro-batches got different weights. Clip once, after the window's last backward().",
        "yo": "Gradient fèrèsé {window} kò ju max_norm lọ, ṣùgbọ́n kò dojú kọ ibi tí gradient "
        "batch kíkún tí a gé ń dojú kọ: a gé e kí fèrèsé tó parí, nítorí náà àwọn micro-batch "
        "rẹ̀ gba ìwọ̀n tí ó yàtọ̀. Gé e lẹ́ẹ̀kan, lẹ́yìn backward() tó kẹ́yìn nínú fèrèsé.",
    },
    # Lesson 3: BatchNorm
    "not_a_model": {
        "en": "Your function returned a {got}: return the network (an nn.Module) with its "
        "normalization layers replaced.",
        "yo": "Iṣẹ́ rẹ dá {got} padà: dá network náà padà (nn.Module) pẹ̀lú àwọn layer "
        "normalization rẹ̀ tí a ti rọ́pò.",
    },
    "eval_mode": {
        "en": "Layer `{name}` is still a BatchNorm, put in eval mode: training switches it back "
        "to the micro-batch's statistics (model.train()). Replace the layer instead.",
        "yo": "Layer `{name}` ṣì jẹ́ BatchNorm, tí a fi sí eval mode: training yóò dá a padà sí "
        "àwọn ìṣirò micro-batch (model.train()). Rọ́pò layer náà dípò bẹ́ẹ̀.",
    },
    "batchnorm_left": {
        "en": "Layer `{name}` of the returned network is still a {kind}: it normalizes over "
        "the micro-batch's samples, so a micro-batch is not a slice of the full batch.",
        "yo": "Layer `{name}` nínú network tí o dá padà ṣì jẹ́ {kind}: ó ń ṣe normalization lórí "
        "àwọn àpẹẹrẹ micro-batch, nítorí náà micro-batch kì í ṣe apá kan batch kíkún.",
    },
    "norm_removed": {
        "en": "The network had {norms} normalization layers and now has {kept}: removing them "
        "changes the model. Put a per-sample normalization (LayerNorm, GroupNorm) in their place.",
        "yo": "Network náà ní layer normalization {norms}, ní báyìí ó ní {kept}: yíyọ wọ́n kúrò "
        "ń yí model padà. Fi normalization tí ń ṣiṣẹ́ lórí àpẹẹrẹ kọ̀ọ̀kan (LayerNorm, GroupNorm) "
        "sí ipò wọn.",
    },
    "model_fails": {
        "en": "The returned network fails on a micro-batch: {error}. Does each new layer have "
        "the width of the layer it replaces?",
        "yo": "Network tí o dá padà kùnà lórí micro-batch kan: {error}. Ṣé layer tuntun kọ̀ọ̀kan ní "
        "ìbú layer tí ó rọ́pò?",
    },
    "not_equivalent": {
        "en": "With micro-batches of {sizes}, the accumulated gradient differs from the full "
        "batch's by {error}: some layer still mixes the samples of a micro-batch.",
        "yo": "Pẹ̀lú micro-batch {sizes}, gradient tí a kó jọ yàtọ̀ sí ti batch kíkún ní {error}: "
        "layer kan ṣì ń da àwọn àpẹẹrẹ micro-batch pọ̀.",
    },
    # Lesson 4: memory
    "not_bytes": {
        "en": "Your function returned a {got}: return a whole number of {name}.",
        "yo": "Iṣẹ́ rẹ dá {got} padà: dá iye {name} odidi padà.",
    },
    "not_whole": {
        "en": "Your function returned {got}: return a whole number of {name} (integer division "
        "`//`, or math.ceil, keeps it whole).",
        "yo": "Iṣẹ́ rẹ dá {got} padà: dá iye {name} odidi padà (pínpín odidi `//`, tàbí "
        "math.ceil, ń pa á mọ́ ní odidi).",
    },
    "whole_batch_activations": {
        "en": "For {batch} samples in N = {n} micro-batches you predicted {got}, the peak of "
        "the whole batch in one step; the window holds one micro-batch's activations at a "
        "time: {right}.",
        "yo": "Fún àpẹẹrẹ {batch} nínú micro-batch N = {n}, o sọ pé {got}, peak gbogbo batch "
        "ní ìgbésẹ̀ kan; fèrèsé ń gbé activations micro-batch kan ṣoṣo ní ẹ̀ẹ̀kan: {right}.",
    },
    "no_floor": {
        "en": "You predicted {got}, the activations alone: parameters, gradients and optimizer "
        "state ({floor}, the floor) stay in memory whatever N is.",
        "yo": "O sọ pé {got}, activations nìkan: parameters, gradient àti ipò optimizer "
        "({floor}, ilẹ̀ náà) wà nínú memory bí N ti wù kí ó jẹ́.",
    },
    "smallest_micro_batch": {
        "en": "For {batch} samples in N = {n} micro-batches you predicted {got}, the right "
        "peak is {right}: the split is uneven and its largest micro-batch, of {largest} "
        "samples, sets the peak.",
        "yo": "Fún àpẹẹrẹ {batch} nínú micro-batch N = {n}, o sọ pé {got}, peak tí ó tọ̀nà ni "
        "{right}: pínpín náà kò dọ́gba, micro-batch tó tóbi jù, ti àpẹẹrẹ {largest}, ló ń "
        "pinnu peak.",
    },
    "floor_divided": {
        "en": "You predicted {got}: the floor was divided by N = {n} too, but parameters, "
        "gradients and optimizer state do not shrink with accumulation. The peak is {right}.",
        "yo": "O sọ pé {got}: a pín ilẹ̀ náà sí N = {n} pẹ̀lú, ṣùgbọ́n parameters, gradient àti "
        "ipò optimizer kì í dín kù pẹ̀lú ìkójọpọ̀. Peak náà jẹ́ {right}.",
    },
    "peak_differs": {
        "en": "For {batch} samples in N = {n} micro-batches you predicted {got}; the lesson's "
        "model gives {right}.",
        "yo": "Fún àpẹẹrẹ {batch} nínú micro-batch N = {n}, o sọ pé {got}; àwòṣe ẹ̀kọ́ náà "
        "fúnni ní {right}.",
    },
    "budget_without_floor": {
        "en": "With a budget of {budget} and a floor of {floor} you chose {got} samples: the "
        "whole budget went to activations, but the floor takes its share first. {right} fit.",
        "yo": "Pẹ̀lú ìnáwó {budget} àti ilẹ̀ {floor}, o yan àpẹẹrẹ {got}: gbogbo ìnáwó lọ sí "
        "activations, ṣùgbọ́n ilẹ̀ náà ń mú ìpín tirẹ̀ lákọ̀ọ́kọ́. Àpẹẹrẹ {right} ló bá a mu.",
    },
    "one_too_many": {
        "en": "{got} samples of {per_sample} on a floor of {floor} peak at {peak}, over the "
        "budget of {budget}: round the number of samples down, not up.",
        "yo": "Àpẹẹrẹ {got} ti {per_sample} lórí ilẹ̀ {floor} dé peak {peak}, ó ju ìnáwó "
        "{budget} lọ: ka iye àpẹẹrẹ sísàlẹ̀, kì í ṣe sókè.",
    },
    "negative_samples": {
        "en": "The floor of {floor} is above the budget of {budget}, and you returned {got}: "
        "when not even one sample fits, return 0.",
        "yo": "Ilẹ̀ {floor} ju ìnáwó {budget} lọ, o sì dá {got} padà: nígbà tí àpẹẹrẹ kan "
        "ṣoṣo kò bá bá a mu, dá 0 padà.",
    },
    "micro_batch_differs": {
        "en": "With a budget of {budget}, a floor of {floor} and {per_sample} per sample you "
        "chose {got} samples; {right} is the largest micro-batch that fits.",
        "yo": "Pẹ̀lú ìnáwó {budget}, ilẹ̀ {floor} àti {per_sample} fún àpẹẹrẹ kọ̀ọ̀kan, o yan "
        "àpẹẹrẹ {got}; {right} ni micro-batch tó tóbi jù tí ó bá a mu.",
    },
    "hint_l4_peak": {
        "en": "Which parts stay whatever N is, and which belong to the one micro-batch in "
        "memory? When N does not divide the batch, which micro-batch is the largest?",
        "yo": "Àwọn apá wo ló wà bí N ti wù kí ó jẹ́, àwọn wo sì jẹ́ ti micro-batch kan ṣoṣo tí "
        "ó wà nínú memory? Nígbà tí N kò bá pín batch náà dọ́gba, micro-batch wo ló tóbi jù?",
    },
    "hint_l4_budget": {
        "en": "Take the floor from the budget first: what is left is the room for activations. "
        "How many whole samples fit in it, and what if none does?",
        "yo": "Yọ ilẹ̀ náà kúrò nínú ìnáwó lákọ̀ọ́kọ́: ohun tí ó kù ni àyè fún activations. "
        "Àpẹẹrẹ odidi mélòó ló bá a mu, tí kò bá sì sí ọ̀kankan ńkọ́?",
    },
    # Lesson 5: the schedule's length
    "not_a_number": {
        "en": "Your function returned a {got}: return the number of optimizer steps, an int.",
        "yo": "Iṣẹ́ rẹ dá {got} padà: dá iye ìmúdójúìwọ̀n optimizer padà, gẹ́gẹ́ bí int.",
    },
    "not_an_int": {
        "en": "{got} is the right count as a float: a scheduler counts whole steps, return an "
        "int (math.ceil returns one).",
        "yo": "{got} ni iye tí ó tọ̀nà, ṣùgbọ́n float ni: scheduler ń ka ìgbésẹ̀ odidi, dá int "
        "padà (math.ceil ń dá ọ̀kan padà).",
    },
    "counted_micro_batches": {
        "en": "With {batches} micro-batches per epoch, N = {n} and {epochs} epochs you counted "
        "{got}, the micro-batches: len(dataloader) counts micro-batches, and the optimizer "
        "steps once per window of N. The schedule would be N times too long.",
        "yo": "Pẹ̀lú micro-batch {batches} fún epoch kọ̀ọ̀kan, N = {n} àti epoch {epochs}, o ka "
        "{got}, iye micro-batch: len(dataloader) ń ka micro-batch, optimizer sì ń ṣe "
        "ìmúdójúìwọ̀n lẹ́ẹ̀kan fún fèrèsé N kọ̀ọ̀kan. Schedule náà yóò gùn ní ìlọ́po N.",
    },
    "dropped_last_window": {
        "en": "With {batches} micro-batches per epoch and N = {n} you counted {got}, the right "
        "count is {right}: the last window of each epoch holds {last} micro-batches and still "
        "gets its step. Round the windows up.",
        "yo": "Pẹ̀lú micro-batch {batches} fún epoch kọ̀ọ̀kan àti N = {n}, o ka {got}, iye tí ó "
        "tọ̀nà ni {right}: fèrèsé tó kẹ́yìn epoch kọ̀ọ̀kan ní micro-batch {last}, ó sì ṣì ń gba "
        "ìmúdójúìwọ̀n tirẹ̀. Ka àwọn fèrèsé sókè.",
    },
    "windows_across_epochs": {
        "en": "With {batches} micro-batches per epoch, N = {n} and {epochs} epochs you counted "
        "{got}, the right count is {right}: a window does not run on into the next epoch, so "
        "each epoch's short last window is a step of its own. Count per epoch, then multiply.",
        "yo": "Pẹ̀lú micro-batch {batches} fún epoch kọ̀ọ̀kan, N = {n} àti epoch {epochs}, o ka "
        "{got}, iye tí ó tọ̀nà ni {right}: fèrèsé kan kì í kọjá sínú epoch tó tẹ̀lé, nítorí náà "
        "fèrèsé kúkúrú tó kẹ́yìn epoch kọ̀ọ̀kan jẹ́ ìmúdójúìwọ̀n tirẹ̀. Ka fún epoch kan, lẹ́yìn "
        "náà sọ ọ́ di ìlọ́po.",
    },
    "steps_differ": {
        "en": "With {batches} micro-batches per epoch, N = {n} and {epochs} epochs you counted "
        "{got}; the training loop steps {right} times.",
        "yo": "Pẹ̀lú micro-batch {batches} fún epoch kọ̀ọ̀kan, N = {n} àti epoch {epochs}, o ka "
        "{got}; lóòpù training ń ṣe ìmúdójúìwọ̀n ní ìgbà {right}.",
    },
    # Lesson 7: the frameworks' arguments
    "not_a_dict": {
        "en": "Your function returned a {got}: return a dict with one dict of arguments per "
        "framework, as the docstring shows.",
        "yo": "Iṣẹ́ rẹ dá {got} padà: dá dict padà, pẹ̀lú dict àwọn argument kan fún framework "
        "kọ̀ọ̀kan, bí docstring ṣe fi hàn.",
    },
    "framework_missing": {
        "en": 'The arguments for {framework} are missing: give a dict under the key "{framework}".',
        "yo": 'Àwọn argument fún {framework} kò sí: fi dict kan sí abẹ́ kọ́kọ́rọ́ "{framework}".',
    },
    "argument_missing": {
        "en": "{framework} got no {name} (you gave {other}): that is the name of its argument "
        "for this.",
        "yo": "{framework} kò rí {name} (o fún un ní {other}): orúkọ argument rẹ̀ fún èyí nìyẹn.",
    },
    "processes_forgotten": {
        "en": "{framework}'s {name} is {got} for an effective batch of {batch} in micro-batches "
        "of {micro} on {processes} processes: each process adds its own micro-batch to every "
        "step, so the effective batch would be {processes}× too large. It is {right}.",
        "yo": "{name} ti {framework} jẹ́ {got} fún batch àpapọ̀ {batch} ní micro-batch {micro} "
        "lórí process {processes}: process kọ̀ọ̀kan ń fi micro-batch tirẹ̀ kún ìmúdójúìwọ̀n "
        "kọ̀ọ̀kan, nítorí náà batch àpapọ̀ yóò tóbi ní ìlọ́po {processes}. Ó jẹ́ {right}.",
    },
    "per_device_is_micro": {
        "en": "per_device_train_batch_size is {got}: it is the micro-batch of one process "
        "({right}), not a share of the effective batch. N makes up the rest.",
        "yo": "per_device_train_batch_size jẹ́ {got}: micro-batch process kan ni ({right}), kì í "
        "ṣe ìpín batch àpapọ̀. N ló ń kún èyí tó kù.",
    },
    "argument_differs": {
        "en": "{framework}'s {name} is {got} for an effective batch of {batch}, micro-batches "
        "of {micro} and {processes} process(es); it should be {right}.",
        "yo": "{name} ti {framework} jẹ́ {got} fún batch àpapọ̀ {batch}, micro-batch {micro} àti "
        "process {processes}; ó yẹ kí ó jẹ́ {right}.",
    },
    "hint_l7_arguments": {
        "en": "All three take the micro-batch of one process and N; the effective batch is "
        "their product with the number of processes. Section 1's table names each argument.",
        "yo": "Gbogbo mẹ́tẹ̀ẹ̀ta ń gba micro-batch process kan àti N; batch àpapọ̀ ni àbájáde "
        "wọn pẹ̀lú iye process. Tábìlì apá 1 ń dárúkọ argument kọ̀ọ̀kan.",
    },
    # Lesson 9: reading a plan
    "not_a_pair": {
        "en": "Your function returned a {got}: return two values, N and whether the window fits "
        "(True or False), separated by a comma.",
        "yo": "Iṣẹ́ rẹ dá {got} padà: dá iye méjì padà, N àti bóyá fèrèsé náà bá a mu "
        "(True tàbí False), pẹ̀lú àmì ìdánudúró láàárín wọn.",
    },
    "nothing_fits": {
        "en": "On a plan where no micro-batch fits (plan.micro_batch_size is None) your function "
        "failed: {error}. There is no N then: return None for it, and False for whether it fits.",
        "yo": "Lórí ètò tí kò sí micro-batch kankan tí ó bá a mu (plan.micro_batch_size jẹ́ None), "
        "iṣẹ́ rẹ kùnà: {error}. Kò sí N nígbà náà: dá None padà fún un, àti False fún bóyá ó bá "
        "a mu.",
    },
    "steps_not_a_number": {
        "en": "Your N is a {got}: return the number of micro-batches per window, an int.",
        "yo": "N rẹ jẹ́ {got}: dá iye micro-batch nínú fèrèsé kan padà, gẹ́gẹ́ bí int.",
    },
    "steps_not_whole": {
        "en": "Your N for {batch} samples in micro-batches of {micro} is {got}: a loop runs a "
        "whole number of micro-batches. Round up, to an int.",
        "yo": "N rẹ fún àpẹẹrẹ {batch} nínú micro-batch {micro} jẹ́ {got}: lóòpù kan ń ṣiṣẹ́ iye "
        "micro-batch odidi. Ka á sókè, sí int.",
    },
    "steps_rounded_down": {
        "en": "For {batch} samples in micro-batches of {micro} you chose N = {got}: {got} × "
        "{micro} = {covered} samples, short of {batch}. Round up: N = {right}, with a smaller "
        "last micro-batch.",
        "yo": "Fún àpẹẹrẹ {batch} nínú micro-batch {micro}, o yan N = {got}: {got} × {micro} = "
        "àpẹẹrẹ {covered}, kò tó {batch}. Ka á sókè: N = {right}, pẹ̀lú micro-batch tó kẹ́yìn "
        "tí ó kéré sí i.",
    },
    "plan_steps_reused": {
        "en": "For {batch} samples you returned N = {got}, the plan's N for its own effective "
        "batch of {planned}. The micro-batch of {micro} still fits; N must make up {batch}.",
        "yo": "Fún àpẹẹrẹ {batch}, o dá N = {got} padà, N ti ètò náà fún batch àpapọ̀ tirẹ̀ "
        "{planned}. Micro-batch {micro} ṣì bá a mu; N gbọ́dọ̀ kún {batch}.",
    },
    "plan_steps_differ": {
        "en": "For {batch} samples in micro-batches of {micro} you chose N = {got}; the training "
        "loop needs {right}.",
        "yo": "Fún àpẹẹrẹ {batch} nínú micro-batch {micro}, o yan N = {got}; lóòpù training nílò "
        "{right}.",
    },
    "fits_not_bool": {
        "en": "Whether the window fits is a {got} in your answer: return True or False.",
        "yo": "Bóyá fèrèsé náà bá a mu jẹ́ {got} nínú ìdáhùn rẹ: dá True tàbí False padà.",
    },
    "reserve_forgotten": {
        "en": "The window peaks at {peak}, under the budget of {budget} but over the {usable} "
        "left once the reserve of {reserve} (the CUDA context, workspaces) is kept: you said it "
        "fits. Compare the peak with what is usable, not with the whole budget.",
        "yo": "Peak fèrèsé náà jẹ́ {peak}, ó kéré sí ìnáwó {budget} ṣùgbọ́n ó ju {usable} lọ, "
        "èyí tí ó kù lẹ́yìn tí a pa ìpamọ́ {reserve} mọ́ (CUDA context, workspaces): o sọ pé ó "
        "bá a mu. Fi peak wé èyí tí a lè lò, kì í ṣe gbogbo ìnáwó.",
    },
    "whole_batch_compared": {
        "en": "You said the window does not fit, but it peaks at {peak}, within the usable "
        "{usable}: {whole} is the peak of the whole effective batch in one step, which is what "
        "accumulation avoids.",
        "yo": "O sọ pé fèrèsé náà kò bá a mu, ṣùgbọ́n peak rẹ̀ jẹ́ {peak}, nínú {usable} tí a lè "
        "lò: {whole} ni peak gbogbo batch àpapọ̀ ní ìgbésẹ̀ kan, èyí tí ìkójọpọ̀ ń yẹra fún.",
    },
    "floor_compared": {
        "en": "You said the window fits, but it peaks at {peak}, over the usable {usable}: the "
        "floor of {floor} fits, yet the activations of a micro-batch come on top of it.",
        "yo": "O sọ pé fèrèsé náà bá a mu, ṣùgbọ́n peak rẹ̀ jẹ́ {peak}, ó ju {usable} tí a lè "
        "lò lọ: ilẹ̀ {floor} bá a mu, ṣùgbọ́n activations micro-batch kan ń wá lé e lórí.",
    },
    "fits_differs": {
        "en": "A window that peaks at {peak}, with {usable} usable ({budget} less a reserve of "
        "{reserve}): you answered {fits_said} to whether it fits. Compare the peak with what "
        "is usable.",
        "yo": "Fèrèsé tí peak rẹ̀ jẹ́ {peak}, pẹ̀lú {usable} tí a lè lò ({budget} láìsí ìpamọ́ "
        "{reserve}): o dáhùn {fits_said} sí bóyá ó bá a mu. Fi peak wé èyí tí a lè lò.",
    },
    "hint_l9_plan": {
        "en": "A plan gives the micro-batch that fits (micro_batch_size, None when none does), "
        "the window's peak (peak_bytes) and what the card leaves for it (usable_bytes). How "
        "many micro-batches cover the effective batch, when the last may be short?",
        "yo": "Ètò kan ń fúnni ní micro-batch tí ó bá a mu (micro_batch_size, None tí kò bá sí "
        "ọ̀kankan), peak fèrèsé náà (peak_bytes) àti ohun tí káàdì náà fi sílẹ̀ fún un "
        "(usable_bytes). Micro-batch mélòó ló ń bo batch àpapọ̀, tí èyí tó kẹ́yìn bá lè kúrú?",
    },
    # Hints: where to look, never the answer
    "hint_l2_uneven": {
        "en": "A micro-batch's loss is a mean over its own samples. What share of the window's "
        "samples does it hold? That share is its weight.",
        "yo": "Loss micro-batch kan jẹ́ àròpín lórí àwọn àpẹẹrẹ tirẹ̀. Ìpín mélòó nínú àwọn "
        "àpẹẹrẹ fèrèsé ló ní? Ìpín yẹn ni ìwọ̀n rẹ̀.",
    },
    "hint_l2_tokens": {
        "en": "Which target positions does the loss average over? Count them (targets that are "
        "not -100) in each micro-batch and in the whole window.",
        "yo": "Lórí àwọn ipò target wo ni loss ń ṣe àròpín? Kà wọ́n (target tí kì í ṣe -100) "
        "nínú micro-batch kọ̀ọ̀kan àti nínú gbogbo fèrèsé.",
    },
    "hint_l2_schedule": {
        "en": "Clipping and the scheduler belong to the optimizer step, not to the micro-batch: "
        "which lines run once per window?",
        "yo": "Clipping àti scheduler jẹ́ ti ìmúdójúìwọ̀n optimizer, kì í ṣe ti micro-batch: "
        "àwọn ìlà wo ló ń ṣiṣẹ́ lẹ́ẹ̀kan fún fèrèsé kọ̀ọ̀kan?",
    },
    "hint_l3_safe": {
        "en": "Walk the network's children (named_children); a BatchNorm1d knows its width "
        "(num_features). Which normalization uses one sample at a time?",
        "yo": "Lọ káàkiri àwọn ọmọ network náà (named_children); BatchNorm1d mọ ìbú rẹ̀ "
        "(num_features). Normalization wo ló ń lo àpẹẹrẹ kan ṣoṣo ní ẹ̀ẹ̀kan?",
    },
    "hint_l5_steps": {
        "en": "How many windows does one epoch make, when the last may be short? The optimizer "
        "steps once per window, and every epoch starts a new window.",
        "yo": "Fèrèsé mélòó ni epoch kan ń ṣe, tí èyí tó kẹ́yìn bá lè kúrú? Optimizer ń ṣe "
        "ìmúdójúìwọ̀n lẹ́ẹ̀kan fún fèrèsé kọ̀ọ̀kan, epoch kọ̀ọ̀kan sì ń bẹ̀rẹ̀ fèrèsé tuntun.",
    },
}


def say(key: str, lang: str = "en", **fields) -> str:
    """The message `key` in `lang`, its `{name}` fields filled in."""
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {sorted(LANGUAGES)}, got {lang!r}")
    if key not in MESSAGES:
        raise ValueError(f"key must be one of the exercises' messages (MESSAGES), got {key!r}")
    return MESSAGES[key][lang].format(**fields)
