"""The mock domain (upstream ``domains/mock/``, 1.0.1): tasks and users for the agent, a notification inbox for the
user."""

from ..models import F, DictOf, ListOf, Lit, Model, Opt, coerce
from ..toolkit import Record, ToolKit, is_tool

TASK_STATUS = Lit(("pending", "completed"))
TASK = Model("Task", (F("task_id", str), F("title", str), F("description", Opt(str), None), F("status", TASK_STATUS)))
USER = Model("User", (F("user_id", str), F("name", str), F("tasks", ListOf(str))))
MOCK_DB = Model("MockDB", (F("tasks", DictOf(TASK)), F("users", DictOf(USER))), forbid_extra=True)
NOTIFICATION = Model("Notification", (F("notification_id", str), F("message", str),
                                      F("status", Lit(("unread", "read")), "unread"),
                                      F("task_id", Opt(str), None)), forbid_extra=True)
MOCK_USER_DB = Model("MockUserDB", (F("notifications", DictOf(NOTIFICATION), dict),), forbid_extra=True)


class MockTools(ToolKit):
    """Simple tools for the mock domain."""

    db_model = MOCK_DB

    @is_tool("write")
    def create_task(self, user_id: str, title: str, description: str = None):
        """
        Create a new task for a user.

        Args:
            user_id: The ID of the user creating the task
            title: The title of the task
            description: Optional description of the task

        Returns:
            The created task

        Raises:
            ValueError: If the user is not found
        """
        if user_id not in self.db["users"]:
            raise ValueError(f"User {user_id} not found")
        task_id = f"task_{len(self.db['tasks']) + 1}"
        task = coerce(TASK, {"task_id": task_id, "title": title, "description": description, "status": "pending"})
        self.db["tasks"][task_id] = task
        self.db["users"][user_id]["tasks"].append(task_id)
        return Record(task)

    @is_tool("read")
    def get_users(self):
        """
        Get all users in the database.
        """
        return [Record(user) for user in self.db["users"].values()]

    @is_tool("write")
    def update_task_status(self, task_id: str, status: TASK_STATUS):
        """
        Update the status of a task.

        Args:
            task_id: The ID of the task to update
            status: The new status of the task

        Returns:
            The updated task

        Raises:
            ValueError: If the task is not found
        """
        if task_id not in self.db["tasks"]:
            raise ValueError(f"Task {task_id} not found")
        task = self.db["tasks"][task_id]
        task["status"] = status  # upstream assigns without validation
        return Record(task)

    def assert_number_of_tasks(self, user_id, expected_number):
        if user_id not in self.db["users"]:
            raise ValueError(f"User {user_id} not found")
        return len(self.db["users"][user_id]["tasks"]) == expected_number

    def assert_task_status(self, task_id, expected_status):
        if task_id not in self.db["tasks"]:
            raise ValueError(f"Task {task_id} not found")
        return self.db["tasks"][task_id]["status"] == expected_status

    @is_tool("generic")
    def transfer_to_human_agents(self, summary: str):
        """
        Transfer the user to a human agent, with a summary of the user's issue.

        Only transfer if
         -  the user explicitly asks for a human agent
         -  given the policy and the available tools, you cannot solve the user's issue.

        Args:
            summary: A summary of the user's issue.

        Returns:
            A message indicating the user has been transferred to a human agent.
        """
        return "Transfer successful"


class MockUserTools(ToolKit):
    """User-side tools for the mock domain: a notification inbox."""

    db_model = MOCK_USER_DB

    @is_tool("read")
    def check_notifications(self):
        """Check all notifications in the user's inbox.

        Returns:
            A list of all notifications.
        """
        return [Record(n) for n in self.db["notifications"].values()]

    @is_tool("write")
    def dismiss_notification(self, notification_id: str):
        """Dismiss (mark as read) a notification.

        Args:
            notification_id: The ID of the notification to dismiss.

        Returns:
            A confirmation message.

        Raises:
            ValueError: If the notification is not found.
        """
        if notification_id not in self.db["notifications"]:
            raise ValueError(f"Notification {notification_id} not found")
        self.db["notifications"][notification_id]["status"] = "read"
        return f"Notification {notification_id} dismissed"

    def add_notification(self, notification_id, message, task_id=None):
        notification = coerce(NOTIFICATION, {"notification_id": notification_id, "message": message,
                                             "task_id": task_id})
        self.db["notifications"][notification_id] = notification
        return Record(notification)

    def assert_notification_status(self, notification_id, expected_status):
        if notification_id not in self.db["notifications"]:
            raise ValueError(f"Notification {notification_id} not found")
        return self.db["notifications"][notification_id]["status"] == expected_status
