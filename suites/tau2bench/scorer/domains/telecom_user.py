"""The telecom user's tools (upstream ``domains/telecom/user_tools.py``, 1.0.1): what the simulated user does on
their phone, the tasks' initial actions that break it, and the env assertions on it. Texts as upstream's."""

from ..models import AnyOf, coerce
from ..toolkit import ModelOrDict, is_tool
from .telecom_device import APN_SETTINGS, NETWORK_MODE, PERFORMANCE, PhoneSimulation, enum_repr

_SIM_TEXT = {"active": "Your SIM card is active and working.", "missing": "No SIM card detected in the phone.",
             "locked_pin": "The SIM card is locked with a PIN code.",
             "locked_puk": "The SIM card is locked with a PUK code."}
_ADVICE = {"Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
           "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
           "Fair": "Connection is okay for web browsing and some standard definition streaming.",
           "Good": "Connection is good for most activities, including HD streaming.",
           "Excellent": "Connection is very fast."}


def _on(flag) -> str:
    return "ON" if flag else "OFF"


def _yes(flag) -> str:
    return "Yes" if flag else "No"


class TelecomUserTools(PhoneSimulation):
    """
    Provides methods to simulate user actions and agent instructions
    on a MockPhoneAttributes instance.
    """

    def _with_status_bar(self, text: str) -> str:
        return f"{text}\nStatus Bar: {self._check_status_bar()}"

    # --- User Info (initial actions)
    def set_user_info(self, name, phone_number):
        self.surroundings["name"] = name
        self.surroundings["phone_number"] = phone_number

    def set_user_location(self, abroad):
        self.surroundings["is_abroad"] = abroad

    @is_tool("read")
    def check_status_bar(self):
        """Shows what icons are currently visible in your phone's status bar (the area at the top of the screen). Displays network signal strength, mobile data status (enabled, disabled, data saver), Wi-Fi status, and battery level."""
        return f"Status Bar: {self._check_status_bar()}"

    @is_tool("read")
    def check_network_status(self):
        """Checks your phone's connection status to cellular networks and Wi-Fi. Shows airplane mode status, signal strength, network type, whether mobile data is enabled, and whether data roaming is enabled."""
        device = self.device
        lines = [f"Airplane Mode: {_on(device['airplane_mode'])}",
                 f"SIM Card Status: {self._check_sim_status()}",
                 f"Cellular Connection: {device['network_connection_status']}",
                 f"Cellular Signal: {device['network_signal_strength']}",
                 f"Cellular Network Type: {device['network_technology_connected']}",
                 f"Mobile Data Enabled: {_yes(device['data_enabled'])}",
                 f"Data Roaming Enabled: {_yes(device['roaming_enabled'])}",
                 f"Wi-Fi Radio: {_on(device['wifi_enabled'])}",
                 f"Wi-Fi Connected: {_yes(device['wifi_connected'])}"]
        if device["wifi_connected"]:
            lines.append(f"Connected Wi-Fi Network: {device['wifi_ssid']}")
        return "\n".join(lines)

    @is_tool("read")
    def check_network_mode_preference(self):
        """Shows the current network mode preference."""
        mode = self.device["network_mode_preference"]
        if not isinstance(mode, str):  # set_network_mode_preference assigns a non-string as it is, as upstream
            raise AttributeError(f"'{type(mode).__name__}' object has no attribute 'value'")
        return f"Network Mode Preference: {mode}"

    @is_tool("write")
    def set_network_mode_preference(self, mode: AnyOf((NETWORK_MODE, str))):
        """Changes the type of cellular network your phone prefers to connect to (e.g., 5G, LTE/4G, 3G). Higher-speed networks (LTE/5G) provide faster data but may use more battery."""
        if isinstance(mode, str) and mode not in NETWORK_MODE.values:
            return self._with_status_bar(f"Failed to set network mode: '{mode}' is not a valid option. Please use "
                                         f"one of: {', '.join(NETWORK_MODE.values)}")
        self.device["network_mode_preference"] = mode
        self.simulate_network_search()
        if not isinstance(mode, str):
            raise AttributeError(f"'{type(mode).__name__}' object has no attribute 'value'")
        return self._with_status_bar(f"Preferred Network Mode set to: {mode}")

    @is_tool("read")
    def run_speed_test(self):
        """Measures your current internet connection speed (download speed). Provides information about connection quality and what activities it can support."""
        speed, description = self._run_speed_test()
        if speed is None:
            return f"Speed test failed: {description or 'Could not determine speed'}."
        return f"Speed Test Result: {speed:.2f} Mbps ({description}). {_ADVICE.get(description, '')}"

    @is_tool("write")
    def toggle_airplane_mode(self):
        """Toggles Airplane Mode ON or OFF. When ON, it disconnects all wireless communications including cellular, Wi-Fi, and Bluetooth.
        Returns the new state of airplane_mode.
        """
        return self._with_status_bar(f"Airplane Mode is now {_on(self._toggle_airplane_mode())}.")

    def turn_airplane_mode_on(self):
        if not self._toggle_airplane_mode():
            self._toggle_airplane_mode()
        return "Airplane Mode is now ON."

    def turn_airplane_mode_off(self):
        if self._toggle_airplane_mode():
            self._toggle_airplane_mode()
        return "Airplane Mode is now OFF."

    @is_tool("read")
    def check_sim_status(self):
        """Checks if your SIM card is working correctly and displays its current status. Shows if the SIM is active, missing, or locked with a PIN or PUK code."""
        status = self._check_sim_status()
        return _SIM_TEXT.get(status, f"Unknown SIM status: {status}")

    @is_tool("write")
    def reseat_sim_card(self):
        """Simulates removing and reinserting your SIM card. This can help resolve recognition issues."""
        self.device["sim_card_missing"] = False
        self.simulate_network_search()
        return self._with_status_bar("SIM card re-seated successfully.")

    def unseat_sim_card(self):
        self.device["sim_card_missing"] = True
        self.simulate_network_search()
        return "SIM card un-seated successfully."

    def lock_sim_card(self, mode):
        if mode == "pin":
            self.device["sim_card_status"] = "locked_pin"
        elif mode == "puk":
            self.device["sim_card_status"] = "locked_puk"
        self.simulate_network_search()
        return f"SIM card locked successfully in {mode} mode."

    @is_tool("write")
    def toggle_data(self):
        """Toggles your phone's mobile data connection ON or OFF. Controls whether your phone can use cellular data for internet access when Wi-Fi is unavailable.
        Returns the new data connection status.
        """
        return self._with_status_bar(f"Mobile Data is now {_on(self._toggle_data())}.")

    def turn_data_on(self):
        self.device["data_enabled"] = True
        return "Data connection restored."

    def turn_data_off(self):
        if self._toggle_data():
            self._toggle_data()
        return "Data connection broken."

    @is_tool("write")
    def toggle_roaming(self):
        """Toggles Data Roaming ON or OFF. When ON, your phone can use data networks in areas outside your carrier's coverage.
        Returns the new data roaming status.
        """
        return self._with_status_bar(f"Data Roaming is now {_on(self._toggle_roaming())}.")

    def turn_roaming_on(self):
        if not self._toggle_roaming():
            self._toggle_roaming()
        return "Data Roaming is now ON."

    def turn_roaming_off(self):
        if self._toggle_roaming():
            self._toggle_roaming()
        return "Data Roaming is now OFF."

    @is_tool("read")
    def check_data_restriction_status(self):
        """Checks if your phone has any data-limiting features active. Shows if Data Saver mode is on."""
        if self.device["data_saver_mode"]:
            return "Data Saver mode is ON (limits data usage)."
        return "Data Saver mode is OFF."

    @is_tool("write")
    def toggle_data_saver_mode(self):
        """Toggles Data Saver mode ON or OFF. When ON, it reduces data usage, which may affect data speed.
        Returns the new data saver mode status.
        """
        return self._with_status_bar(f"Data Saver Mode is now {_on(self._toggle_data_saver_mode())}.")

    def turn_data_saver_mode_on(self):
        if not self._toggle_data_saver_mode():
            self._toggle_data_saver_mode()
        return "Data Saver Mode is now ON."

    def turn_data_saver_mode_off(self):
        if self._toggle_data_saver_mode():
            self._toggle_data_saver_mode()
        return "Data Saver Mode is now OFF."

    @is_tool("read")
    def check_apn_settings(self):
        """Checks the technical APN settings your phone uses to connect to your carrier's mobile data network. Shows current APN name and MMSC URL for picture messaging."""
        settings = self._apn_settings("model_copy")
        return (f"Current APN Name: {settings['apn_name'] or 'Not Set'}\nMMSC URL (for picture messages): "
                f"{settings['mmsc_url'] or 'Not Set'}\n(These are technical settings, usually best left unchanged.)")

    @is_tool("write")
    def set_apn_settings(self, apn_settings: ModelOrDict(APN_SETTINGS)):
        """Sets the APN settings for the phone."""
        if isinstance(apn_settings, dict):
            apn_settings = coerce(APN_SETTINGS, apn_settings)
        self.device["active_apn_settings"] = apn_settings
        if not isinstance(apn_settings, dict):
            raise AttributeError(f"'{type(apn_settings).__name__}' object has no attribute 'apn_name'")
        self.simulate_network_search()
        return self._with_status_bar(f"APN settings set to: {apn_settings['apn_name']}")

    @is_tool("write")
    def reset_apn_settings(self):
        """Resets your APN settings to the default settings."""
        self._set_apn("reset_at_reboot", True)
        self.simulate_network_search()
        return self._with_status_bar("APN settings will reset at reboot.")

    def break_apn_settings(self):
        self._set_apn("apn_name", "broken")
        self.simulate_network_search()
        return "APN settings broken. Please call reset_apn_settings() to fix."

    def break_apn_mms_setting(self):
        self._set_apn("mmsc_url", None)
        return "APN MMS setting broken. Please call reset_apn_settings() to fix."

    @is_tool("read")
    def check_wifi_status(self):
        """Checks your Wi-Fi connection status. Shows if Wi-Fi is turned on, which network you're connected to (if any), and the signal strength."""
        device = self.device
        if not device["wifi_enabled"]:
            return "Wi-Fi is turned OFF."
        if device["wifi_connected"]:
            return (f"Wi-Fi is ON and connected to '{device['wifi_ssid']}'. Signal strength: "
                    f"{device['wifi_signal_strength']}.")
        return "Wi-Fi is ON but not connected to any network."

    @is_tool("write")
    def toggle_wifi(self):
        """Toggles your phone's Wi-Fi radio ON or OFF. Controls whether your phone can discover and connect to wireless networks for internet access.
        Returns the new Wi-Fi status.
        """
        device = self.device
        if device["airplane_mode"]:
            return self._with_status_bar("Cannot change Wi-Fi settings while Airplane Mode is ON.")
        device["wifi_enabled"] = not device["wifi_enabled"]
        if not device["wifi_enabled"]:
            device.update(wifi_connected=False, wifi_ssid=None, wifi_signal_strength="none")
        return self._with_status_bar(f"Wi-Fi is now {_on(device['wifi_enabled'])}.")

    @is_tool("read")
    def check_wifi_calling_status(self):
        """Checks if Wi-Fi Calling is enabled on your device. This feature allows you to make and receive calls over a Wi-Fi network instead of using the cellular network."""
        return f"Wi-Fi Calling is currently turned {_on(self.device['wifi_calling_enabled'])}."

    @is_tool("write")
    def toggle_wifi_calling(self):
        """Toggles Wi-Fi Calling ON or OFF. This feature allows you to make and receive calls over Wi-Fi instead of the cellular network, which can help in areas with weak cellular signal.
        Returns the new Wi-Fi Calling status.
        """
        return self._with_status_bar(f"Wi-Fi Calling is now {_on(self._toggle_wifi_calling())}.")

    def set_wifi_calling(self, enabled, mms_over_wifi=None):
        if self.device["wifi_calling_enabled"] != enabled:
            self._toggle_wifi_calling()
        message = f"Wi-Fi Calling is now {_on(enabled)}."
        if mms_over_wifi is not None:
            self.device["wifi_calling_mms_over_wifi"] = mms_over_wifi
            message += f"\nMMS over Wi-Fi is now {_on(mms_over_wifi)}."
        return message

    @is_tool("read")
    def check_vpn_status(self):
        """Checks if you're using a VPN (Virtual Private Network) connection. Shows if a VPN is active, connected, and displays any available connection details."""
        device = self.device
        if device["vpn_connected"]:
            details = device["vpn_details"]
            if details:
                shown = ", ".join(f"{key!r}: " + (enum_repr(PERFORMANCE, value) if key == "server_performance"
                                                   else repr(value)) for key, value in details.items())
                return f"VPN is ON and connected. Details: {{{shown}}}"
            return "VPN is ON and connected (no specific details available)."
        if device["vpn_enabled_setting"]:
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."

    @is_tool("write")
    def connect_vpn(self):
        """Connects to your VPN (Virtual Private Network)."""
        if self._connect_vpn() is None:
            return "VPN already connected."
        return self._with_status_bar("VPN connected successfully.")

    @is_tool("write")
    def disconnect_vpn(self):
        """Disconnects any active VPN (Virtual Private Network) connection. Stops routing your internet traffic through a VPN server, which might affect connection speed or access to content."""
        done = self._disconnect_vpn()
        return self._with_status_bar("VPN disconnected successfully." if done
                                     else "No active VPN connection to disconnect.")

    def break_vpn(self):
        self.connect_vpn()
        self.device["vpn_details"]["server_performance"] = "poor"
        return "VPN connection broken."

    @is_tool("read")
    def check_installed_apps(self):
        """Returns the name of all installed apps on the phone."""
        return f"The following apps are installed on the phone: {', '.join(self.device['app_statuses'].keys())}"

    @is_tool("read")
    def check_app_status(self, app_name: str):
        """Checks detailed information about a specific app. Shows its permissions and background data usage settings."""
        app = self.device["app_statuses"].get(app_name)
        if not app:
            return f"App '{app_name}' not found on this phone."
        lines = [f"Status for App: {app_name}"]
        allowed = [name.replace("_", " ").lower() for name, on in app["permissions"].items() if on]
        if not allowed:
            lines.append(" - Permissions: None granted.")
        else:
            lines.append(" - Permissions Granted:")
            lines.extend(f"   - {permission}" for permission in allowed)
        return "\n".join(lines)

    @is_tool("read")
    def check_app_permissions(self, app_name: str):
        """Checks what permissions a specific app currently has. Shows if the app has access to features like storage, camera, location, etc."""
        app = self.device["app_statuses"].get(app_name)
        if not app:
            return f"App '{app_name}' not found on this phone."
        allowed = [name.replace("_", " ").lower() for name, on in app["permissions"].items() if on]
        if not allowed:
            return f"App '{app_name}' currently has no permissions granted."
        return f"App '{app_name}' has permission for: {', '.join(allowed)}."

    @is_tool("write")
    def grant_app_permission(self, app_name: str, permission: str):
        """Gives a specific permission to an app (like access to storage, camera, or location). Required for some app functions to work properly.

        Args:
            app_name: The name of the app to grant the permission to.
            permission: The permission to grant, should be lowercase.
        """
        app = self.device["app_statuses"].get(app_name)
        permission = permission.lower()
        if not app:
            message = f"Error. App '{app_name}' not found. Cannot grant permission."
        elif permission not in app["permissions"]:
            message = (f"Error. Permission '{permission}' not tracked for app '{app_name}', available permissions: "
                       f"{list(app['permissions'])}")
        else:
            app["permissions"][permission] = True
            message = f"Success. Permission '{permission}' granted to app '{app_name}'."
        return self._with_status_bar(message)

    def remove_app_permission(self, app_name, permission):
        app = self.device["app_statuses"].get(app_name)
        permission = permission.lower()
        if not app:
            return False, f"App '{app_name}' not found. Cannot remove permission."
        if permission not in app["permissions"]:
            return False, f"Permission '{permission}' not tracked for app '{app_name}'."
        app["permissions"][permission] = False
        return True, f"Permission '{permission}' removed from app '{app_name}'."

    @is_tool("read")
    def can_send_mms(self):
        """Checks if the default messaging app can send MMS messages."""
        if self._can_send_mms():
            return "Your messaging app can send MMS messages."
        return "Your messaging app cannot send MMS messages."

    @is_tool("write")
    def reboot_device(self):
        """Restarts your phone completely. This can help resolve many temporary software glitches by refreshing all running services and connections."""
        lines = []
        if self._apn("reset_at_reboot"):
            lines.append("Resetting APN settings...")
            self.device["active_apn_settings"] = coerce(APN_SETTINGS, {})
        lines.append("Restarting network services...")
        self.device["network_connection_status"] = "searching"
        self.simulate_network_search()
        return self._with_status_bar("\n".join(lines))

    @is_tool("read")
    def check_payment_request(self):
        """
        Checks if the agent has sent you a payment request.
        """
        request = self.surroundings["payment_request"]
        if request is None:
            return "No payment request has been made."
        return f"You have a payment request for bill {request['bill_id']} of {request['amount_due']} USD."

    @is_tool("write")
    def make_payment(self):
        """
        Makes a payment for the bill that the agent has sent you.
        """
        request = self.surroundings["payment_request"]
        if request is None:
            return "You do not have a payment request."
        request["paid"] = True
        return f"Payment of {request['amount_due']} USD has been made for bill {request['bill_id']}."

    # --- assertions
    def assert_airplane_mode_status(self, expected_status):
        return self.device["airplane_mode"] == expected_status

    def assert_service_status(self, expected_status):
        if expected_status not in ("connected", "searching", "no_service", "emergency_only"):
            raise ValueError(f"{expected_status!r} is not a valid NetworkStatus")
        return self.device["network_connection_status"] == expected_status

    def assert_mobile_data_status(self, expected_status):
        return self._get_mobile_data_working() == expected_status

    def assert_mobile_roaming_status(self, expected_status):
        return self.device["roaming_enabled"] == expected_status

    def assert_mobile_data_saver_mode_status(self, expected_status):
        return self.device["data_saver_mode"] == expected_status

    def assert_internet_speed(self, expected_speed, expected_desc=None):
        speed, desc = self._run_speed_test()
        speed = speed or 0.0
        if expected_desc is None:
            return speed >= expected_speed
        return speed >= expected_speed and desc.lower() == expected_desc.lower()

    def assert_internet_not_excellent(self):
        return self._run_speed_test()[1].lower() != "excellent"

    def assert_can_send_mms(self, expected_status):
        return self._can_send_mms() == expected_status

    def assert_mobile_data_usage_exceeded(self, expected_status):
        return self.surroundings["mobile_data_usage_exceeded"] == expected_status

