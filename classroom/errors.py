"""Why a classroom action was refused: each refusal is its own class, and its message says why in words a
student or teacher can act on. Every one is a ValueError (bad input, from a stranger), except a wrong
teacher key, which is a PermissionError."""

from __future__ import annotations


class ClassroomError(ValueError):
    """A classroom action that the rules refuse."""


class RoomNotFound(ClassroomError):
    pass


class RoomClosed(ClassroomError):
    pass


class RoomExpired(ClassroomError):
    pass


class RoomFull(ClassroomError):
    pass


class TooManyRooms(ClassroomError):
    pass


class TooManyQuestions(ClassroomError):
    pass


class NicknameRefused(ClassroomError):
    pass


class JoinRateLimited(ClassroomError):
    pass


class UnknownStudent(ClassroomError):
    pass


class UnknownQuestion(ClassroomError):
    pass


class AnswersClosed(ClassroomError):
    pass


class InvalidAnswer(ClassroomError):
    pass


class InvalidQuestion(ClassroomError):
    pass


class InvalidView(ClassroomError):
    pass


class InvalidLesson(ClassroomError):
    pass


class SchemaTooNew(ClassroomError):
    pass


class StoreUnavailable(ClassroomError):
    """The classroom database cannot be used now (a bad URL, a wrong password, a server down or unreachable).
    Its message names the database without its password, and the problem; nothing of class mode works until the
    database answers again, and everything outside class mode goes on."""


class TeacherKeyRejected(PermissionError):
    """The teacher key is missing or is not this room's."""
