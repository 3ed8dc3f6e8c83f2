/* What tree-sitter costs with no Python in the way, for bench/prism_floor.py: parse a file, then optionally visit
 * every node with a tree cursor (the least any extractor must do) or run a query and step through its captures
 * (what prism's extractor asks of tree-sitter before its Python work starts). Built against the tree-sitter runtime
 * of the installed binding's own version, from its sdist; the language comes from tree_sitter_python's capsule. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "tree_sitter/api.h"

static TSParser *parser;
static TSQuery *query;
static TSQueryCursor *cursor;

static PyObject *setup(PyObject *self, PyObject *args) {
    PyObject *capsule;
    const char *text;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "Os#", &capsule, &text, &size)) return NULL;
    const TSLanguage *language = PyCapsule_GetPointer(capsule, "tree_sitter.Language");
    if (language == NULL) return NULL;
    parser = ts_parser_new();
    if (!ts_parser_set_language(parser, language)) {
        PyErr_SetString(PyExc_ValueError, "the grammar's ABI does not match this tree-sitter runtime");
        return NULL;
    }
    uint32_t offset;
    TSQueryError error;
    query = ts_query_new(language, text, (uint32_t)size, &offset, &error);
    if (query == NULL) return PyErr_Format(PyExc_ValueError, "query error %d at offset %u", error, offset);
    cursor = ts_query_cursor_new();
    Py_RETURN_NONE;
}

/* run(source, mode) -> nodes or captures seen: mode 0 parses only, 1 walks every node, 2 steps through captures */
static PyObject *run(PyObject *self, PyObject *args) {
    const char *source;
    Py_ssize_t size;
    int mode;
    if (!PyArg_ParseTuple(args, "y#i", &source, &size, &mode)) return NULL;
    if (parser == NULL) return PyErr_Format(PyExc_RuntimeError, "call setup() first");
    TSTree *tree = ts_parser_parse_string(parser, NULL, source, (uint32_t)size);
    long seen = 0;
    if (mode == 1) {
        TSTreeCursor walk = ts_tree_cursor_new(ts_tree_root_node(tree));
        for (;;) {
            TSNode node = ts_tree_cursor_current_node(&walk);
            seen += ts_node_symbol(node) != 0;
            if (ts_tree_cursor_goto_first_child(&walk)) continue;
            while (!ts_tree_cursor_goto_next_sibling(&walk)) {
                if (!ts_tree_cursor_goto_parent(&walk)) goto walked;
            }
        }
    walked:
        ts_tree_cursor_delete(&walk);
    } else if (mode == 2) {
        TSQueryMatch match;
        uint32_t index;
        ts_query_cursor_exec(cursor, query, ts_tree_root_node(tree));
        while (ts_query_cursor_next_capture(cursor, &match, &index)) {
            seen += ts_node_start_byte(match.captures[index].node) != UINT32_MAX;
        }
    }
    ts_tree_delete(tree);
    return PyLong_FromLong(seen);
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "setup(language_capsule, query_source)"},
    {"run", run, METH_VARARGS, "run(source_bytes, mode) -> count"},
    {NULL, NULL, 0, NULL},
};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "ts_floor", NULL, -1, methods};
PyMODINIT_FUNC PyInit_ts_floor(void) { return PyModule_Create(&module); }
