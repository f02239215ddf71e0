"""Sphinx directives that generate pages from f2loopy itself.

``.. f2loopy-command:: NAME`` (``{f2loopy-command} NAME`` in MyST) documents
one command of the ``f2loopy`` command line from its click definition: the
usage line, the help text and every option with its help, exactly as
``f2loopy NAME --help`` knows them, so the page cannot drift from the
program.  ``.. f2loopy-recipes::`` lists the shipped transformation recipes
with their options (as ``f2loopy recipes`` does, from their syntax trees).
"""

from docutils import nodes
from docutils.parsers.rst import Directive, directives


def _paragraphs(text):
    out = []
    for para in (text or "").strip().split("\n\n"):
        if para.startswith("\b\n"):
            out.append(nodes.literal_block(para[2:], para[2:]))
        else:
            out.append(nodes.paragraph(text=" ".join(x.strip() for x in para.splitlines())))
    return out


class CommandDirective(Directive):
    required_arguments = 1
    has_content = False

    def run(self):
        import click

        from f2loopy.cli import main
        root = click.Context(main, info_name="f2loopy", **main.context_settings)
        name = self.arguments[0]
        command = main.get_command(root, name) if name != "f2loopy" else main
        if command is None:
            raise self.error(f"f2loopy has no command {name!r}")
        ctx = click.Context(command, info_name=name, parent=root) if name != "f2loopy" \
            else root
        usage = " ".join(["f2loopy"] + ([name] if name != "f2loopy" else [])
                         + command.collect_usage_pieces(ctx))
        out = [nodes.literal_block(usage, usage)]
        out += _paragraphs(command.help)
        items = nodes.definition_list()
        for param in command.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            names, text = record
            item = nodes.definition_list_item()
            term = nodes.term()
            term += nodes.literal(names, names)
            item += term
            definition = nodes.definition()
            definition += nodes.paragraph(text=text or "")
            item += definition
            items += item
        if len(items):
            out.append(nodes.rubric(text="Options"))
            out.append(items)
        if name == "f2loopy" and command.epilog:
            out += _paragraphs(command.epilog)
        return out


class RecipesDirective(Directive):
    has_content = False

    def run(self):
        from f2loopy.cli_tools import builtin_recipes, format_options
        out = []
        for r in builtin_recipes():
            section = nodes.section(ids=[f"recipe-{r.name}"])
            section += nodes.title(text=r.name)
            section += nodes.paragraph(text=f"options: {format_options(r.options)}")
            section += nodes.literal_block(r.doc, r.doc)
            out.append(section)
        return out


def setup(app):
    directives.register_directive("f2loopy-command", CommandDirective)
    directives.register_directive("f2loopy-recipes", RecipesDirective)
    return {"version": "1", "parallel_read_safe": True}
